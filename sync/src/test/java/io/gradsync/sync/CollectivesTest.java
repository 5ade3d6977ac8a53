package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.backend.ptx.PtxOnJvm;
import io.gradsync.sync.internal.HostAverage;
import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.sync.verify.RandomGradients;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Broadcast, reduce-scatter and all-gather on every single-process backend, checked byte for byte
 * against their definitions on fresh random data: gradients back to back in one buffer (so the
 * backends merge them into runs) with counts that no world size divides, one empty, NaN-patterned
 * guards before and after that no call may touch. The reduce-scatter's shards are the average's
 * bits ({@link HostAverage}, the definition every backend meets) and within float64 rounding of
 * the mean; everything outside them, and everything an all-gather or broadcast does not write, is
 * checked to be the input's bytes.
 */
class CollectivesTest {
    private static final long[] COUNTS = {20_011, 7, 1, 197, 0, 4096, 3};
    private static final int GUARD_BYTES = 64;
    private final List<Device> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(Device::close);
    }

    enum Op { REDUCE_SCATTER, ALL_GATHER, BROADCAST_FIRST, BROADCAST_LAST }

    enum Form { SYNC, ASYNC, ASYNC_ON_STREAMS }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (String backend : List.of("cpu", "ptx schedule", "ptx schedule, partly without P2P", "opencl")) {
            for (DType t : DType.values()) {
                for (int n : new int[] {2, 3, 4}) {
                    for (Op op : Op.values()) {
                        Form form = Form.values()[(t.ordinal() + n + op.ordinal()) % Form.values().length];
                        out.add(Arguments.of(backend, t, n, op, form));
                    }
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}, {1}, {2} replicas, {3}, {4}")
    @MethodSource("cases")
    void everyCollectiveMeetsItsDefinition(String backend, DType dtype, int n, Op op, Form form) {
        check(backend, devices(backend, n, false), dtype, op, form);
    }

    /** The same on GPUs: ptx's PTX kernels and peer copies, cpu through pinned memory, opencl on NVIDIA's OpenCL. */
    @ParameterizedTest(name = "{0}, {1}, {2} replicas, {3}, {4} on GPUs")
    @MethodSource("gpuCases")
    @Tag("gpu")
    void everyCollectiveMeetsItsDefinitionOnGpus(String backend, DType dtype, int n, Op op, Form form) {
        assumeTrue(CudaRuntime.status().available(), () -> CudaRuntime.status().describe());
        check(backend, devices(backend, n, true), dtype, op, form);
    }

    static Stream<Arguments> gpuCases() {
        return cases().filter(a -> !a.get()[0].toString().contains("without"))
                .map(a -> a.get()[0].equals("ptx schedule") ? Arguments.of("ptx", a.get()[1], a.get()[2], a.get()[3], a.get()[4]) : a);
    }

    private List<? extends Device> devices(String backend, int n, boolean gpus) {
        return TestDevices.forBackend(backend, n, gpus, opened);
    }

    private static GradientSynchronizer synchronizer(String backend, List<? extends Device> devices) {
        PtxOptions small = PtxOptions.defaults().withOneShotMaxBytes(4096);
        return switch (backend) {
            case "ptx schedule" -> PtxOnJvm.schedule(devices, small, true, true);
            case "ptx schedule, partly without P2P" -> {
                int n = devices.size();
                boolean[][] p2p = new boolean[n][n];
                for (int i = 0; i < n; i++) {
                    for (int j = 0; j < n; j++) {
                        p2p[i][j] = i == j || (i + j) % 2 == 0; // odd pairs go through host memory
                    }
                }
                yield PtxOnJvm.schedule(devices, small, p2p, true, true);
            }
            case "cpu" -> Synchronizers.create(SyncBackend.CPU, devices,
                    SyncOptions.defaults().withCpu(CpuOptions.defaults().withChunkBytes(16 << 10).withSlots(2)));
            default -> Synchronizers.create(SyncBackend.parse(backend), devices);
        };
    }

    private void check(String backend, List<? extends Device> devices, DType dtype, Op op, Form form) {
        int n = devices.size();
        try (GradientSynchronizer sync = synchronizer(backend, devices); Packed f = new Packed(devices, dtype)) {
            // twice with fresh data: the second call replays what the first planned (and ptx recorded)
            for (int round = 0; round < 2; round++) {
                f.fill(1000L * round + 31L * n + 7L * dtype.ordinal() + op.ordinal());
                run(sync, f, op, form);
                for (int r = 0; r < n; r++) {
                    MemorySegment want = f.expected(op, r);
                    MemorySegment got = f.download(r);
                    long at = got.mismatch(want);
                    int rr = r;
                    assertEquals(-1, at, () -> backend + " " + op + ": replica " + rr + " differs from the definition at byte "
                            + at + " (" + f.where(at) + ")");
                    if (op == Op.REDUCE_SCATTER) {
                        f.assertShardsNearMean(got, r);
                    }
                }
            }
        }
    }

    private static void run(GradientSynchronizer sync, Packed f, Op op, Form form) {
        List<Replica> replicas = f.replicas;
        List<DeviceStream> streams = new ArrayList<>();
        if (form == Form.ASYNC_ON_STREAMS) {
            replicas = new ArrayList<>();
            for (Replica r : f.replicas) {
                DeviceStream s = r.device().createStream();
                streams.add(s);
                replicas.add(r.withStream(s));
            }
        }
        int root = op == Op.BROADCAST_FIRST ? 0 : f.devices.size() - 1;
        if (form == Form.SYNC) {
            switch (op) {
                case REDUCE_SCATTER -> sync.reduceScatter(replicas);
                case ALL_GATHER -> sync.allGather(replicas);
                default -> sync.broadcast(replicas, root);
            }
        } else {
            SyncHandle h = switch (op) {
                case REDUCE_SCATTER -> sync.reduceScatterAsync(replicas);
                case ALL_GATHER -> sync.allGatherAsync(replicas);
                default -> sync.broadcastAsync(replicas, root);
            };
            if (form == Form.ASYNC) {
                h.await();
            }
        }
        for (DeviceStream s : streams) {
            s.synchronize(); // work on the caller's stream after the call runs after the collective
            s.close();
        }
    }

    /** Sharded training's step on one replica set: a reduce-scatter then an all-gather leaves exactly what the average leaves. */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("zeroCases")
    void reduceScatterThenAllGatherIsTheAverage(String backend, DType dtype) {
        List<? extends Device> devices = devices(backend, 3, false);
        try (GradientSynchronizer sync = synchronizer(backend, devices); Packed f = new Packed(devices, dtype)) {
            f.fill(5);
            sync.synchronize(f.replicas);
            List<MemorySegment> averaged = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                averaged.add(f.download(r));
            }
            f.fill(5);
            sync.reduceScatter(f.replicas);
            sync.allGather(f.replicas);
            for (int r = 0; r < 3; r++) {
                long at = f.download(r).mismatch(averaged.get(r));
                int rr = r;
                assertEquals(-1, at, () -> backend + ": replica " + rr + " differs from synchronize's result at byte " + at);
            }
        }
    }

    static Stream<Arguments> zeroCases() {
        return Stream.of("cpu", "ptx schedule", "ptx schedule, partly without P2P", "opencl")
                .flatMap(b -> Stream.of(DType.values()).map(t -> Arguments.of(b, t)));
    }

    @Test
    void aRootOutsideTheReplicasIsRefusedAndNothingMoves() {
        for (String backend : List.of("cpu", "ptx schedule", "single")) {
            int n = backend.equals("single") ? 1 : 3;
            List<? extends Device> devices = devices("jvm", n, false);
            try (GradientSynchronizer sync = backend.equals("single") ? Synchronizers.create(SyncBackend.SINGLE, devices)
                    : synchronizer(backend, devices); Packed f = new Packed(devices, DType.FP32)) {
                f.fill(9);
                for (int root : new int[] {-1, n, Integer.MAX_VALUE}) {
                    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.broadcast(f.replicas, root));
                    assertTrue(e.getMessage().contains("root " + root) && e.getMessage().contains("0.." + (n - 1)), e.getMessage());
                    assertThrows(IllegalArgumentException.class, () -> sync.broadcastAsync(f.replicas, root));
                }
                for (int r = 0; r < n; r++) {
                    assertEquals(-1, f.download(r).mismatch(f.input(r)), backend + ": replica " + r + " changed");
                }
            }
        }
    }

    @Test
    void layoutsThatDifferAreRefusedByEveryCollective() {
        List<? extends Device> devices = devices("jvm", 2, false);
        try (GradientSynchronizer sync = synchronizer("cpu", devices); Packed f = new Packed(devices, DType.FP32)) {
            f.fill(3);
            List<Replica> bad = List.of(f.replicas.get(0), new Replica(devices.get(1), f.replicas.get(1).gradients().subList(0, 2)));
            for (Runnable call : List.<Runnable>of(() -> sync.reduceScatter(bad), () -> sync.allGather(bad), () -> sync.broadcast(bad, 0),
                    () -> sync.reduceScatterAsync(bad), () -> sync.allGatherAsync(bad), () -> sync.broadcastAsync(bad, 1))) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
                assertTrue(e.getMessage().contains("has 2 gradients, replica 0 has " + COUNTS.length), e.getMessage());
            }
            for (int r = 0; r < 2; r++) {
                assertEquals(-1, f.download(r).mismatch(f.input(r)), "replica " + r + " changed");
            }
        }
    }

    @Test
    void oneReplicaIsLeftAsItIs() {
        List<? extends Device> devices = devices("jvm", 1, false);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.SINGLE, devices); Packed f = new Packed(devices, DType.BF16)) {
            f.fill(1);
            sync.reduceScatter(f.replicas);
            sync.allGatherAsync(f.replicas).await();
            sync.broadcast(f.replicas, 0);
            assertEquals(-1, f.download(0).mismatch(f.input(0)));
        }
    }

    /** Per replica one buffer: a guard, the gradients of {@link #COUNTS} back to back, a guard. */
    static final class Packed implements AutoCloseable {
        final List<? extends Device> devices;
        final DType dtype;
        final long[] offsets = new long[COUNTS.length];
        final long bytes;
        final List<DeviceBuffer> buffers = new ArrayList<>();
        final List<MemorySegment> inputs = new ArrayList<>();
        final List<Replica> replicas = new ArrayList<>();
        private final Arena arena = Arena.ofShared();

        Packed(List<? extends Device> devices, DType dtype) {
            this.devices = devices;
            this.dtype = dtype;
            long at = GUARD_BYTES;
            for (int g = 0; g < COUNTS.length; g++) {
                offsets[g] = at;
                at += COUNTS[g] * dtype.bytes();
            }
            bytes = at + GUARD_BYTES;
            for (Device d : devices) {
                DeviceBuffer b = d.allocate(bytes);
                Replica.Builder replica = Replica.on(d);
                for (int g = 0; g < COUNTS.length; g++) {
                    replica.add(new Gradient("p" + g, b, offsets[g], COUNTS[g], dtype));
                }
                buffers.add(b);
                inputs.add(arena.allocate(bytes, 64));
                replicas.add(replica.build());
            }
        }

        /** The elements of every gradient of a replica. */
        long elements() {
            return java.util.Arrays.stream(COUNTS).sum();
        }

        /** Fresh random gradients and NaN-patterned guards on every replica, uploaded. */
        void fill(long seed) {
            SplittableRandom random = new SplittableRandom(seed);
            for (int r = 0; r < devices.size(); r++) {
                MemorySegment in = inputs.get(r);
                for (long i = 0; i < bytes / 4; i++) {
                    in.setAtIndex(ValueLayout.JAVA_INT, i, 0x7FC0DEAD);
                }
                for (int g = 0; g < COUNTS.length; g++) {
                    RandomGradients.fill(dtype, in.asSlice(offsets[g]), COUNTS[g], random);
                }
                Device d = devices.get(r);
                try (HostBuffer h = d.allocateHost(bytes); DeviceStream s = d.createStream()) {
                    h.segment().copyFrom(in);
                    s.copyFromHost(h, 0, buffers.get(r), 0, bytes);
                    s.synchronize();
                }
            }
        }

        MemorySegment input(int r) {
            return inputs.get(r);
        }

        MemorySegment download(int r) {
            Device d = devices.get(r);
            MemorySegment out = arena.allocate(bytes, 64);
            try (HostBuffer h = d.allocateHost(bytes); DeviceStream s = d.createStream()) {
                s.copyToHost(buffers.get(r), 0, h, 0, bytes);
                s.synchronize();
                out.copyFrom(h.segment());
            }
            return out;
        }

        /** What replica {@code r} must hold after {@code op}, by the definitions of {@link GradientSynchronizer}. */
        MemorySegment expected(Op op, int r) {
            int n = devices.size();
            MemorySegment want = arena.allocate(bytes, 64);
            want.copyFrom(inputs.get(r));
            long size = dtype.bytes();
            for (int g = 0; g < COUNTS.length; g++) {
                long base = offsets[g];
                switch (op) {
                    case REDUCE_SCATTER -> {
                        Shards own = Shards.range(COUNTS[g], n, r);
                        MemorySegment[] in = new MemorySegment[n];
                        for (int i = 0; i < n; i++) {
                            in[i] = inputs.get(i).asSlice(base);
                        }
                        MemorySegment avg = arena.allocate(Math.max(1, COUNTS[g] * size), 64);
                        HostAverage.average(dtype, in, avg, 0, COUNTS[g]);
                        want.asSlice(base + own.offset() * size, own.count() * size).copyFrom(avg.asSlice(own.offset() * size, own.count() * size));
                    }
                    case ALL_GATHER -> {
                        for (int h = 0; h < n; h++) {
                            Shards s = Shards.range(COUNTS[g], n, h);
                            long from = base + s.offset() * size;
                            want.asSlice(from, s.count() * size).copyFrom(inputs.get(h).asSlice(from, s.count() * size));
                        }
                    }
                    case BROADCAST_FIRST, BROADCAST_LAST -> {
                        int root = op == Op.BROADCAST_FIRST ? 0 : n - 1;
                        want.asSlice(base, COUNTS[g] * size).copyFrom(inputs.get(root).asSlice(base, COUNTS[g] * size));
                    }
                }
            }
            return want;
        }

        /** The reduce-scatter's shards of replica r within float64 rounding of the mean (an independent check of the definition). */
        void assertShardsNearMean(MemorySegment got, int r) {
            int n = devices.size();
            for (int g = 0; g < COUNTS.length; g++) {
                Shards own = Shards.range(COUNTS[g], n, r);
                long at = offsets[g] + own.offset() * dtype.bytes();
                MemorySegment[] in = new MemorySegment[n];
                for (int i = 0; i < n; i++) {
                    in[i] = inputs.get(i).asSlice(at);
                }
                assertEquals(0, AverageCheck.countWrong(dtype, in, got.asSlice(at), own.count()),
                        "replica " + r + ", gradient p" + g + ": shard elements off the float64 mean");
            }
        }

        String where(long at) {
            for (int g = COUNTS.length - 1; g >= 0; g--) {
                if (at >= offsets[g] && at < offsets[g] + COUNTS[g] * dtype.bytes()) {
                    return "gradient p" + g + ", element " + (at - offsets[g]) / dtype.bytes();
                }
            }
            return "a guard byte";
        }

        @Override
        public void close() {
            buffers.forEach(DeviceBuffer::close);
            arena.close();
        }
    }
}
