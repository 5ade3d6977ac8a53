package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.backend.FusedWire;
import io.gradsync.sync.backend.ptx.PtxOnJvm;
import io.gradsync.sync.backend.wire.WireSynchronizer;
import io.gradsync.sync.internal.HostAverage;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * fp32 gradients on a 16-bit wire ({@link SyncOptions#withWire}), on every backend that averages
 * itself: each replica's value rounded to the wire type (nearest even), those averaged as the wire
 * type's gradients are (float64 sum in replica order, divided, rounded once), widened back: byte
 * for byte that definition, so the same bits on every backend; within the two roundings of the
 * float64 mean; a reduce-scatter's widening on the shard alone.
 */
class WireTest {
    private final List<Device> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(Device::close);
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (String backend : List.of("cpu", "ptx schedule", "ptx schedule, fused", "opencl", "cpu, staged", "ptx schedule, staged", "opencl, staged")) {
            for (DType wire : List.of(DType.BF16, DType.FP16)) {
                for (int n : new int[] {2, 3}) {
                    for (boolean scatter : new boolean[] {false, true}) {
                        out.add(Arguments.of(backend, wire, n, scatter, (n + (scatter ? 1 : 0)) % 3));
                    }
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}, {1} wire, {2} replicas, reduce-scatter {3}, form {4}")
    @MethodSource("cases")
    void theWireAverageIsItsDefinition(String backend, DType wire, int n, boolean scatter, int form) {
        check(backend, devices(backend, n, false), wire, scatter, form);
    }

    @ParameterizedTest(name = "{0}, {1} wire, {2} replicas, reduce-scatter {3}, form {4} on GPUs")
    @MethodSource("cases")
    @Tag("gpu")
    void theWireAverageIsItsDefinitionOnGpus(String backend, DType wire, int n, boolean scatter, int form) {
        assumeTrue(CudaRuntime.status().available(), () -> CudaRuntime.status().describe());
        String onGpus = switch (backend) {
            case "ptx schedule" -> "ptx, not fused";
            case "ptx schedule, fused" -> "ptx";
            case "ptx schedule, staged" -> "ptx, staged";
            default -> backend;
        };
        check(onGpus, devices(backend, n, true), wire, scatter, form);
    }

    private List<? extends Device> devices(String backend, int n, boolean gpus) {
        return TestDevices.forBackend(backend.replace(", staged", ""), n, gpus, opened);
    }

    /** Wire bytes of a stage where a case is staged: 777 elements, so that stages end inside gradients and span several. */
    private static final long STAGE_BYTES = 2 * 777;

    private static GradientSynchronizer synchronizer(String backend, List<? extends Device> devices, DType wire) {
        PtxOptions small = PtxOptions.defaults().withOneShotMaxBytes(4096);
        if (backend.endsWith(", staged")) {
            String base = backend.replace(", staged", "");
            GradientSynchronizer inner = base.equals("ptx schedule") ? PtxOnJvm.schedule(devices, small, true, true)
                    : Synchronizers.create(SyncBackend.parse(base), devices, SyncOptions.defaults().withPtx(small));
            return new WireSynchronizer(inner, wire, devices, true, STAGE_BYTES);
        }
        switch (backend) {
            case "ptx schedule" -> {
                return new WireSynchronizer(PtxOnJvm.schedule(devices, small, true, true), wire, devices, true);
            }
            case "ptx schedule, fused" -> {
                GradientSynchronizer fused = PtxOnJvm.schedule(devices, small, allPeers(devices.size()), true, true, wire);
                assertEquals(wire, ((FusedWire) fused).wire(), "every pair has P2P: the wire goes inside the schedule");
                return fused;
            }
            case "ptx, not fused" -> { // the wire around ptx, as where some pair has no P2P
                System.setProperty(FUSED_WIRE, "false");
                try {
                    GradientSynchronizer around = Synchronizers.create(SyncBackend.PTX, devices, SyncOptions.defaults().withWire(wire));
                    assertTrue(around instanceof WireSynchronizer, "the wire around ptx with " + FUSED_WIRE + "=false");
                    return around;
                } finally {
                    System.clearProperty(FUSED_WIRE);
                }
            }
            default -> {
                GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices, SyncOptions.defaults().withWire(wire));
                if (backend.equals("ptx")) {
                    assertTrue(sync instanceof FusedWire f && f.wire() == wire, "ptx on GPUs with P2P: the wire fused into its schedule");
                }
                return sync;
            }
        }
    }

    private static final String FUSED_WIRE = "gradsync.ptx.fusedWire";

    private static boolean[][] allPeers(int n) {
        boolean[][] all = new boolean[n][n];
        for (boolean[] row : all) {
            java.util.Arrays.fill(row, true);
        }
        return all;
    }

    private void check(String backend, List<? extends Device> devices, DType wire, boolean scatter, int form) {
        int n = devices.size();
        try (GradientSynchronizer sync = synchronizer(backend, devices, wire);
             CollectivesTest.Packed f = new CollectivesTest.Packed(devices, DType.FP32);
             Arena arena = Arena.ofConfined()) {
            for (int round = 0; round < 2; round++) { // the second call reuses the first one's layout
                f.fill(17L * n + wire.ordinal() + round);
                List<Replica> replicas = f.replicas;
                List<DeviceStream> streams = new ArrayList<>();
                if (form == 2) {
                    replicas = new ArrayList<>();
                    for (Replica r : f.replicas) {
                        DeviceStream s = r.device().createStream();
                        streams.add(s);
                        replicas.add(r.withStream(s));
                    }
                }
                long callsBefore = sync.stats().calls();
                if (form == 0) {
                    if (scatter) {
                        sync.reduceScatter(replicas);
                    } else {
                        sync.synchronize(replicas);
                    }
                    long stages = backend.endsWith(", staged") && !scatter ? (f.elements() * 2 + STAGE_BYTES - 1) / STAGE_BYTES : 1;
                    if (sync instanceof WireSynchronizer w) {
                        assertEquals(stages, w.lastStages(), "backend calls: one per stage");
                    }
                    assertEquals(1, sync.stats().calls() - callsBefore, "one call counted, however many stages");
                } else {
                    long bytesBefore = sync.stats().bytes();
                    SyncHandle h = scatter ? sync.reduceScatterAsync(replicas) : sync.synchronizeAsync(replicas);
                    if (form == 1) {
                        h.await();
                        assertEquals(4 * f.elements(), sync.stats().bytes() - bytesBefore, "the caller's fp32 bytes counted, not the wire's");
                    }
                }
                for (DeviceStream s : streams) {
                    s.synchronize();
                    s.close();
                }
                for (int r = 0; r < n; r++) {
                    MemorySegment want = expected(f, wire, r, scatter, arena);
                    MemorySegment got = f.download(r);
                    long at = got.mismatch(want);
                    int rr = r;
                    assertEquals(-1, at, () -> backend + ": replica " + rr + " differs from the wire definition at byte " + at
                            + " (" + f.where(at) + ")");
                    assertNearMean(f, got, wire, r, scatter);
                }
            }
        }
    }

    /** Replica r's buffer by the definition: the inputs, with the wire average widened where the call writes. */
    private static MemorySegment expected(CollectivesTest.Packed f, DType wire, int r, boolean scatter, Arena arena) {
        int n = f.devices.size();
        MemorySegment want = arena.allocate(f.bytes, 64);
        want.copyFrom(f.input(r));
        for (int g = 0; g < f.offsets.length; g++) {
            long count = COUNTS(f, g);
            MemorySegment[] narrowed = new MemorySegment[n];
            for (int i = 0; i < n; i++) {
                narrowed[i] = arena.allocate(Math.max(2, 2 * count), 64);
                for (long e = 0; e < count; e++) {
                    float v = f.input(i).getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, f.offsets[g] / 4 + e);
                    narrowed[i].setAtIndex(ValueLayout.JAVA_SHORT, e, wire == DType.BF16 ? HalfFloats.floatToBf16(v) : HalfFloats.floatToHalf(v));
                }
            }
            MemorySegment avg = arena.allocate(Math.max(2, 2 * count), 64);
            HostAverage.average(wire, narrowed, avg, 0, count);
            Shards s = scatter ? Shards.range(count, n, r) : new Shards(0, count);
            for (long e = s.offset(); e < s.end(); e++) {
                short bits = avg.getAtIndex(ValueLayout.JAVA_SHORT, e);
                float wide = wire == DType.BF16 ? Float.intBitsToFloat((bits & 0xFFFF) << 16) : Float.float16ToFloat(bits);
                want.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, f.offsets[g] / 4 + e, wide);
            }
        }
        return want;
    }

    /** Independently of the definition: within the wire's two roundings (each input's, the average's) of the float64 mean. */
    private static void assertNearMean(CollectivesTest.Packed f, MemorySegment got, DType wire, int r, boolean scatter) {
        int n = f.devices.size();
        double unit = wire == DType.BF16 ? 0x1p-8 : 0x1p-11;
        double floor = wire == DType.BF16 ? Float.MIN_NORMAL : 0x1p-24;
        for (int g = 0; g < f.offsets.length; g++) {
            long count = COUNTS(f, g);
            Shards s = scatter ? Shards.range(count, n, r) : new Shards(0, count);
            for (long e = s.offset(); e < s.end(); e++) {
                double sum = 0, abs = 0;
                for (int i = 0; i < n; i++) {
                    double v = f.input(i).getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, f.offsets[g] / 4 + e);
                    sum += v;
                    abs += Math.abs(v);
                }
                double mean = sum / n;
                double v = got.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, f.offsets[g] / 4 + e);
                double tol = unit * abs / n + unit * Math.abs(mean) + 2 * floor;
                if (!(Math.abs(v - mean) <= tol)) {
                    throw new AssertionError("replica " + r + ", gradient p" + g + " element " + e + ": " + v + " vs mean " + mean);
                }
            }
        }
    }

    private static long COUNTS(CollectivesTest.Packed f, int g) {
        long end = g + 1 < f.offsets.length ? f.offsets[g + 1] : f.bytes - 64;
        return (end - f.offsets[g]) / 4;
    }

    @Test
    void allGatherAndBroadcastStayExact() {
        List<? extends Device> devices = devices("jvm", 3, false);
        try (GradientSynchronizer sync = synchronizer("cpu", devices, DType.BF16);
             CollectivesTest.Packed f = new CollectivesTest.Packed(devices, DType.FP32)) {
            f.fill(3);
            sync.broadcast(f.replicas, 2);
            for (int r = 0; r < 3; r++) {
                assertEquals(-1, f.download(r).mismatch(f.expected(CollectivesTest.Op.BROADCAST_LAST, r)));
            }
            f.fill(4);
            sync.allGather(f.replicas);
            for (int r = 0; r < 3; r++) {
                assertEquals(-1, f.download(r).mismatch(f.expected(CollectivesTest.Op.ALL_GATHER, r)));
            }
        }
    }

    /** One replica: nothing crosses a wire, so its fp32 gradients are not rounded either. */
    @Test
    void oneReplicaIsNotRounded() {
        List<? extends Device> devices = devices("jvm", 1, false);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.SINGLE, devices, SyncOptions.defaults().withWire(DType.BF16));
             CollectivesTest.Packed f = new CollectivesTest.Packed(devices, DType.FP32)) {
            f.fill(8);
            sync.synchronize(f.replicas);
            sync.reduceScatterAsync(f.replicas).await();
            assertEquals(-1, f.download(0).mismatch(f.input(0)), "the fp32 values as they were");
        }
    }

    @Test
    void aWireOfFp32IsNoWireAndNullIsRefused() {
        assertEquals(DType.FP32, SyncOptions.defaults().wire());
        NullPointerException e = assertThrows(NullPointerException.class, () -> SyncOptions.defaults().withWire(null));
        assertTrue(e.getMessage().contains("wire"), e.getMessage());
        List<? extends Device> devices = devices("jvm", 2, false);
        try (GradientSynchronizer plain = Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults().withWire(DType.FP32))) {
            assertTrue(!(plain instanceof WireSynchronizer));
        }
        try (GradientSynchronizer inner = Synchronizers.create(SyncBackend.CPU, devices)) {
            assertThrows(IllegalArgumentException.class, () -> new WireSynchronizer(inner, DType.FP32, devices, true));
        }
    }
}
