package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.sync.verify.RandomGradients;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

/**
 * Measures one synchronizer at one size: fresh random gradients on every device, one checked
 * call (its result against the float64 average), then warm-up calls and timed calls. A call is
 * timed from the host, from entry to return: {@code synchronize} returns only when every replica
 * holds the average, so this is the time a training step waits. Device events would not do better
 * here: the work spans several devices and the synchronizer's own streams, which an event on
 * another stream does not order against ({@code compare}, one kernel on one device, uses them).
 */
public final class SyncBench {
    /**
     * One gradient {@code name} of {@code count} random values per device, in a buffer of its own,
     * its inputs kept pinned in {@code inputs} (the caller frees both lists). Multi-process (one
     * rank of sync.worldSize()): this process's replicas are ranks rank()..; replica q gets
     * {@code seed + q} on every rank, so each can regenerate the others' inputs.
     */
    static List<Replica> flatReplicas(GradientSynchronizer sync, List<? extends Device> devices, String name, DType dtype,
            long count, long seed, List<DeviceBuffer> buffers, List<HostBuffer> inputs) {
        long bytes = count * dtype.bytes();
        int firstReplica = sync.worldSize() > devices.size() ? sync.rank() : 0;
        List<Replica> replicas = new ArrayList<>();
        for (int r = 0; r < devices.size(); r++) {
            Device d = devices.get(r);
            DeviceBuffer buffer = d.allocate(bytes);
            buffers.add(buffer);
            replicas.add(Replica.on(d).add(new Gradient(name, buffer, 0, count, dtype)).build());
            HostBuffer host = d.allocateHost(bytes);
            inputs.add(host);
            fillRandom(dtype, host.segment(), count, seed + firstReplica + r);
            try (DeviceStream s = d.createStream()) {
                s.copyFromHost(host, 0, buffer, 0, bytes);
                s.synchronize();
            }
        }
        return replicas;
    }

    /** Random fill and the check run in blocks of this many elements, in parallel. */
    private static final long BLOCK = 1 << 20;

    private SyncBench() {
    }

    public static SyncMeasurement measure(GradientSynchronizer sync, List<? extends Device> devices, long bytes,
            DType dtype, int warmup, int iterations, boolean check, long seed) {
        return measure(sync, devices, BenchCollective.ALL_REDUCE, bytes, dtype, dtype, warmup, iterations, check, seed);
    }

    /**
     * As for the average, with {@code collective}: the first call is checked against that
     * collective's definition (the float64 average on the shards a reduce-scatter writes, the
     * owner's or root's bits elsewhere), then every call is timed the same way. {@code wire}: the
     * type fp32 gradients cross as ({@code SyncOptions.wire()}; {@code dtype} where they go as they are).
     */
    public static SyncMeasurement measure(GradientSynchronizer sync, List<? extends Device> devices, BenchCollective collective,
            long bytes, DType dtype, DType wire, int warmup, int iterations, boolean check, long seed) {
        long count = bytes / dtype.bytes();
        if (count < 1) {
            throw new IllegalArgumentException("size " + bytes + " B holds no " + dtype.label() + " element");
        }
        long used = count * dtype.bytes();
        List<DeviceBuffer> buffers = new ArrayList<>();
        List<HostBuffer> inputs = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            List<Replica> replicas = flatReplicas(sync, devices, "gradients", dtype, count, seed, buffers, inputs);
            collective.run(sync, replicas);
            long wrong = check ? CollectiveWrong.countWrong(collective, sync, dtype, dtype == DType.FP32 ? wire : dtype, devices, buffers,
                    allInputs(sync, devices, inputs, dtype, count, seed, arena), count) : -1;
            Warmup.run(sync.worldSize() == devices.size(), warmup, used, () -> collective.run(sync, replicas));
            sync.stats().reset(); // the stats then describe the timed calls alone
            double[] micros = new double[iterations];
            for (int i = 0; i < iterations; i++) {
                long t0 = System.nanoTime();
                collective.run(sync, replicas);
                micros[i] = (System.nanoTime() - t0) / 1e3;
            }
            Timing t = Timing.of(micros);
            return new SyncMeasurement(sync.backend(), devices.getFirst().runtime().label(), sync.worldSize(), used,
                    dtype, t.medianMicros(), t.minMicros(), t.maxMicros(), iterations, wrong, SyncMeasurement.HOST_TIMING, collective,
                    dtype == DType.FP32 && collective.sums() ? wire : DType.FP32);
        } finally {
            buffers.forEach(DeviceBuffer::close);
            inputs.forEach(HostBuffer::close);
        }
    }

    static void fillRandom(DType dtype, MemorySegment segment, long count, long seed) {
        long blocks = (count + BLOCK - 1) / BLOCK;
        LongStream.range(0, blocks).parallel().forEach(b -> {
            long from = b * BLOCK;
            long n = Math.min(BLOCK, count - from);
            RandomGradients.fill(dtype, segment.asSlice(from * dtype.bytes(), n * dtype.bytes()), n,
                    new SplittableRandom(seed * 1_000_003L + b));
        });
    }

    /** Every replica's inputs, in global order: local ones as filled, other ranks' regenerated from the seed. */
    static List<MemorySegment> allInputs(GradientSynchronizer sync, List<? extends Device> devices,
            List<HostBuffer> local, DType dtype, long count, long seed, Arena arena) {
        if (sync.worldSize() <= devices.size()) {
            return local.stream().map(HostBuffer::segment).toList();
        }
        List<MemorySegment> all = new ArrayList<>();
        for (int q = 0; q < sync.worldSize(); q++) {
            int r = q - sync.rank();
            if (r >= 0 && r < local.size()) {
                all.add(local.get(r).segment());
            } else {
                MemorySegment other = arena.allocate(count * dtype.bytes(), 64);
                fillRandom(dtype, other, count, seed + q);
                all.add(other);
            }
        }
        return all;
    }

    /** Elements, summed over this process's replicas, that differ from the float64 average beyond rounding. */
    static long countWrong(DType dtype, List<? extends Device> devices, List<DeviceBuffer> buffers,
            List<MemorySegment> inputs, long count) {
        return countWrong(dtype, dtype, devices, buffers, inputs, count);
    }

    /** As above, for fp32 gradients that crossed on a 16-bit {@code wire}. */
    static long countWrong(DType dtype, DType wire, List<? extends Device> devices, List<DeviceBuffer> buffers,
            List<MemorySegment> inputs, long count) {
        long bytes = count * dtype.bytes();
        return IntStream.range(0, devices.size()).mapToLong(r -> {
            Device d = devices.get(r);
            try (HostBuffer out = d.allocateHost(bytes); DeviceStream s = d.createStream()) {
                s.copyToHost(buffers.get(r), 0, out, 0, bytes);
                s.synchronize();
                return countWrong(dtype, wire, inputs, out.segment(), count);
            }
        }).sum();
    }

    /** Elements of {@code output} (in host memory) that differ from the float64 average of {@code inputs}. */
    static long countWrong(DType dtype, List<MemorySegment> inputs, MemorySegment output, long count) {
        return countWrong(dtype, dtype, inputs, output, count);
    }

    static long countWrong(DType dtype, DType wire, List<MemorySegment> inputs, MemorySegment output, long count) {
        long blocks = (count + BLOCK - 1) / BLOCK;
        return LongStream.range(0, blocks).parallel().map(b -> {
            long from = b * BLOCK;
            long n = Math.min(BLOCK, count - from);
            long off = from * dtype.bytes();
            MemorySegment[] in = inputs.stream().map(h -> h.asSlice(off)).toArray(MemorySegment[]::new);
            return AverageCheck.countWrong(dtype, wire, in, output.asSlice(off), n);
        }).sum();
    }
}
