package io.gradsync.sync;

import io.gradsync.sync.verify.CollectiveCheck;

import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.sync.verify.RandomGradients;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * One rank of a multi-process test job, started by {@link ProcessGroup} with the launcher
 * variables set. Every rank makes the same gradients (some back to back in one buffer, one on its
 * own), fills its replica with its own random inputs, and can regenerate every other rank's inputs
 * from the shared seed, so it checks its result against the float64 average of all ranks.
 *
 * <p>Usage: {@code NcclWorker MODE ITERATIONS TIMEOUT_SECONDS [DIE_RANK DIE_AT]}. MODE is
 * {@code average} (exit 0 when every element of every iteration is right; {@code average-on-change}
 * the same with layouts compared only when they change), {@code mismatch} (first
 * a call where the last rank has one element less, which every rank must reject, then as average),
 * {@code collectives} (each iteration a broadcast from rank {@code iteration % world}, a
 * reduce-scatter, an all-gather and an average, each on fresh inputs and checked element by
 * element; {@code collectives-on-change} with layouts compared only when they change),
 * {@code collective-mismatch} (first a reduce-scatter against the last rank's all-gather, then a
 * broadcast whose root the last rank names differently, both of which every rank must reject with
 * its inputs untouched, then as collectives) or {@code die} (rank DIE_RANK halts before iteration
 * DIE_AT; the others must exit {@link #EXIT_FAILED} within the timeout). Output lines start with {@code RESULT}, {@code FAILED},
 * {@code REJECTED} or {@code CRASHED} for the test to parse.
 */
public final class NcclWorker {
    static final int EXIT_WRONG = 1;
    static final int EXIT_FAILED = 3;
    static final int EXIT_REJECTED = 4;
    static final long SEED = 0x5EEDL;

    private NcclWorker() {
    }
    static final long[] COUNTS = {1_000_003, 1, 4096, 77_777, 3, 1 << 20};
    static final DType[] TYPES = {DType.FP32, DType.FP32, DType.FP32, DType.BF16, DType.FP16, DType.FP32};

    static final int EXIT_CRASHED = 5;

    public static void main(String[] args) {
        try {
            work(args);
        } catch (Throwable t) { // anything before the synchronizer exists: say so, do not look like a wrong result
            System.out.println("CRASHED " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(EXIT_CRASHED);
        }
    }

    private static void work(String[] args) {
        String mode = args[0];
        int iterations = Integer.parseInt(args[1]);
        Duration timeout = Duration.ofSeconds(Long.parseLong(args[2]));
        int dieRank = args.length > 3 ? Integer.parseInt(args[3]) : -1;
        int dieAt = args.length > 4 ? Integer.parseInt(args[4]) : -1;
        RendezvousConfig config = RendezvousConfig.fromEnvironment();
        int rank = config.rank();
        int world = config.worldSize();
        CudaDevice device = CudaRuntime.device(config.localRank());
        long[] counts = COUNTS.clone();
        long t0 = System.nanoTime();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, List.of(device),
                SyncOptions.defaults().withTimeout(timeout).withLayoutCheck(mode.endsWith("-on-change")
                        ? SyncOptions.LayoutCheck.ON_CHANGE : SyncOptions.LayoutCheck.EVERY_CALL))) {
            if (sync.rank() != rank || sync.worldSize() != world || sync.localRank() != config.localRank()) {
                throw new AssertionError("rank/world/local rank " + sync.rank() + "/" + sync.worldSize() + "/"
                        + sync.localRank() + " but launched as " + rank + "/" + world + "/" + config.localRank());
            }
            sync.barrier();
            long wrong = run(sync, device, counts, rank, world, iterations, dieRank, dieAt, mode);
            sync.barrier();
            System.out.printf(Locale.ROOT, "RESULT rank=%d wrong=%d iterations=%d%n", rank, wrong, iterations);
            System.out.flush();
            System.exit(wrong == 0 ? 0 : EXIT_WRONG);
        } catch (IllegalArgumentException e) {
            System.out.printf(Locale.ROOT, "REJECTED rank=%d after_ms=%d message=%s%n", rank,
                    (System.nanoTime() - t0) / 1_000_000, e.getMessage());
            System.out.flush();
            System.exit(EXIT_REJECTED);
        } catch (RuntimeException e) {
            System.out.printf(Locale.ROOT, "FAILED rank=%d type=%s message=%s%n", rank, e.getClass().getSimpleName(),
                    e.getMessage());
            e.printStackTrace(System.out);
            System.out.flush();
            System.exit(EXIT_FAILED);
        }
    }

    private static long run(GradientSynchronizer sync, CudaDevice device, long[] counts, int rank, int world,
            int iterations, int dieRank, int dieAt, String mode) {
        // Gradients 0..4 back to back in one buffer (NCCL gets them merged where types agree), 5 alone.
        long[] offsets = new long[counts.length];
        long at = 0;
        for (int g = 0; g < counts.length - 1; g++) {
            at = align(at, TYPES[g].bytes());
            offsets[g] = at;
            at += counts[g] * TYPES[g].bytes();
        }
        long last = counts.length - 1;
        List<DeviceBuffer> buffers = new ArrayList<>();
        try (DeviceStream stream = device.createStream()) {
            DeviceBuffer packed = device.allocate(at);
            DeviceBuffer alone = device.allocate(counts[(int) last] * TYPES[(int) last].bytes());
            buffers.add(packed);
            buffers.add(alone);
            Replica.Builder b = Replica.on(device);
            for (int g = 0; g < counts.length; g++) {
                DeviceBuffer buf = g == last ? alone : packed;
                b.add(new Gradient("grad" + g, buf, g == last ? 0 : offsets[g], counts[g], TYPES[g]));
            }
            Replica replica = b.build();
            long wrong = 0;
            if (mode.equals("mismatch")) {
                wrong += rejectMismatch(sync, replica, rank, world);
            }
            if (mode.startsWith("collective")) {
                if (mode.equals("collective-mismatch")) {
                    wrong += rejectCollectiveMismatch(sync, stream, device, replica, counts, rank, world);
                }
                return wrong + collectives(sync, stream, device, replica, counts, rank, world, iterations);
            }
            for (int it = 0; it < iterations; it++) {
                if (it == dieAt && rank == dieRank) {
                    System.out.printf(Locale.ROOT, "DYING rank=%d iteration=%d%n", rank, it);
                    System.out.flush();
                    Runtime.getRuntime().halt(9); // like a crash: no cleanup, sockets drop
                }
                MemorySegment[][] inputs = inputs(counts, world, it);
                upload(stream, device, replica, inputs, rank);
                long t = System.nanoTime();
                try {
                    sync.synchronize(List.of(replica));
                } catch (RuntimeException e) {
                    // Report and leave at once: what the test measures is how fast a rank fails.
                    System.out.printf(Locale.ROOT, "FAILED rank=%d iteration=%d after_ms=%d type=%s message=%s%n", rank, it,
                            (System.nanoTime() - t) / 1_000_000, e.getClass().getSimpleName(), e.getMessage());
                    System.out.flush();
                    Runtime.getRuntime().halt(EXIT_FAILED);
                }
                long micros = (System.nanoTime() - t) / 1000;
                long wrongNow = 0;
                MemorySegment[] got = download(stream, device, replica);
                for (int g = 0; g < counts.length; g++) {
                    wrongNow += AverageCheck.countWrong(TYPES[g], inputs[g], got[g], counts[g]);
                }
                System.out.printf(Locale.ROOT, "ITERATION rank=%d iteration=%d wrong=%d micros=%d%n", rank, it, wrongNow,
                        micros);
                wrong += wrongNow;
            }
            return wrong;
        } finally {
            buffers.forEach(DeviceBuffer::close);
        }
    }

    /**
     * The last rank offers one element less of gradient 2: every rank must reject the call before
     * anything moves, and stay usable. Returns 1 where the call went through.
     */
    private static long rejectMismatch(GradientSynchronizer sync, Replica replica, int rank, int world) {
        List<Gradient> grads = new ArrayList<>(replica.gradients());
        if (rank == world - 1) {
            Gradient g = grads.get(2);
            grads.set(2, new Gradient(g.name(), g.buffer(), g.byteOffset(), g.count() - 1, g.dtype()));
        }
        try {
            sync.synchronize(List.of(new Replica(replica.device(), grads)));
            System.out.printf(Locale.ROOT, "NOT REJECTED rank=%d%n", rank);
            return 1;
        } catch (IllegalArgumentException e) {
            System.out.printf(Locale.ROOT, "REJECTED rank=%d message=%s%n", rank, e.getMessage());
            return 0;
        }
    }

    /**
     * Each iteration: a broadcast from rank {@code it % world} (asynchronous on odd iterations), a
     * reduce-scatter, an all-gather (asynchronous on odd iterations) and an average, each on fresh
     * inputs and checked: copies bit for bit, averages against float64.
     */
    private static long collectives(GradientSynchronizer sync, DeviceStream stream, CudaDevice device, Replica replica,
            long[] counts, int rank, int world, int iterations) {
        long wrong = 0;
        List<Replica> mine = List.of(replica);
        for (int it = 0; it < iterations; it++) {
            boolean async = it % 2 == 1;
            int root = it % world;
            long wrongNow = 0;
            List<String> ops = List.of("broadcast", "reduce-scatter", "all-gather", "average");
            for (int k = 0; k < ops.size(); k++) {
                String op = ops.get(k);
                MemorySegment[][] inputs = inputs(counts, world, ops.size() * it + k); // fresh inputs per call
                upload(stream, device, replica, inputs, rank);
                long t = System.nanoTime();
                try {
                    switch (op) {
                        case "broadcast" -> {
                            if (async) {
                                sync.broadcastAsync(mine, root).await();
                            } else {
                                sync.broadcast(mine, root);
                            }
                        }
                        case "reduce-scatter" -> sync.reduceScatter(mine);
                        case "all-gather" -> {
                            if (async) {
                                sync.allGatherAsync(mine).await();
                            } else {
                                sync.allGather(mine);
                            }
                        }
                        default -> sync.synchronize(mine);
                    }
                } catch (RuntimeException e) {
                    System.out.printf(Locale.ROOT, "FAILED rank=%d iteration=%d op=%s after_ms=%d type=%s message=%s%n", rank,
                            it, op, (System.nanoTime() - t) / 1_000_000, e.getClass().getSimpleName(), e.getMessage());
                    System.out.flush();
                    Runtime.getRuntime().halt(EXIT_FAILED);
                }
                MemorySegment[] got = download(stream, device, replica);
                long wrongOp = 0;
                for (int g = 0; g < counts.length; g++) {
                    DType type = TYPES[g];
                    wrongOp += switch (op) {
                        case "broadcast" -> CollectiveCheck.wrongAfterBroadcast(type, inputs[g], got[g], counts[g], root);
                        case "reduce-scatter" -> CollectiveCheck.wrongAfterReduceScatter(type, inputs[g], got[g], counts[g], rank);
                        case "all-gather" -> CollectiveCheck.wrongAfterAllGather(type, inputs[g], got[g], counts[g]);
                        default -> AverageCheck.countWrong(type, inputs[g], got[g], counts[g]);
                    };
                }
                System.out.printf(Locale.ROOT, "CALL rank=%d iteration=%d op=%s wrong=%d micros=%d%n", rank, it, op, wrongOp,
                        (System.nanoTime() - t) / 1000);
                wrongNow += wrongOp;
            }
            System.out.printf(Locale.ROOT, "ITERATION rank=%d iteration=%d wrong=%d%n", rank, it, wrongNow);
            wrong += wrongNow;
        }
        return wrong;
    }

    /**
     * The last rank calls the all-gather while the others reduce-scatter, then names another root
     * for a broadcast: every rank must reject both calls, with its inputs left as they were. Returns
     * the calls that went through plus the elements that changed.
     */
    private static long rejectCollectiveMismatch(GradientSynchronizer sync, DeviceStream stream, CudaDevice device,
            Replica replica, long[] counts, int rank, int world) {
        boolean odd = rank == world - 1;
        MemorySegment[][] inputs = inputs(counts, world, 999);
        upload(stream, device, replica, inputs, rank);
        List<Replica> mine = List.of(replica);
        long wrong = 0;
        List<Runnable> calls = List.of(
                () -> {
                    if (odd) {
                        sync.allGather(mine);
                    } else {
                        sync.reduceScatter(mine);
                    }
                },
                () -> sync.broadcastAsync(mine, odd ? 1 : 0).await());
        for (Runnable call : calls) {
            try {
                call.run();
                System.out.printf(Locale.ROOT, "NOT REJECTED rank=%d%n", rank);
                wrong++;
            } catch (IllegalArgumentException e) {
                System.out.printf(Locale.ROOT, "REJECTED rank=%d message=%s%n", rank, e.getMessage());
            }
        }
        MemorySegment[] got = download(stream, device, replica);
        for (int g = 0; g < counts.length; g++) {
            wrong += CollectiveCheck.differing(TYPES[g], inputs[g][rank], got[g], 0, counts[g]);
        }
        return wrong;
    }

    private static void upload(DeviceStream stream, CudaDevice device, Replica replica, MemorySegment[][] inputs, int rank) {
        for (int g = 0; g < replica.gradients().size(); g++) {
            Gradient gr = replica.gradients().get(g);
            try (HostBuffer h = device.allocateHost(gr.byteSize())) {
                h.segment().copyFrom(inputs[g][rank]);
                stream.copyFromHost(h, 0, gr.buffer(), gr.byteOffset(), gr.byteSize());
                stream.synchronize();
            }
        }
    }

    /** Every gradient's values now, copied to the heap. */
    private static MemorySegment[] download(DeviceStream stream, CudaDevice device, Replica replica) {
        MemorySegment[] out = new MemorySegment[replica.gradients().size()];
        for (int g = 0; g < out.length; g++) {
            Gradient gr = replica.gradients().get(g);
            try (HostBuffer h = device.allocateHost(gr.byteSize())) {
                stream.copyToHost(gr.buffer(), gr.byteOffset(), h, 0, gr.byteSize());
                stream.synchronize();
                out[g] = MemorySegment.ofArray(new byte[Math.toIntExact(gr.byteSize())]);
                out[g].copyFrom(h.segment());
            }
        }
        return out;
    }

    /** [gradient][rank]: every rank's inputs of one iteration, the same on every rank. */
    private static MemorySegment[][] inputs(long[] counts, int world, int iteration) {
        MemorySegment[][] in = new MemorySegment[counts.length][world];
        for (int g = 0; g < counts.length; g++) {
            for (int q = 0; q < world; q++) {
                in[g][q] = MemorySegment.ofArray(new byte[Math.toIntExact(counts[g] * TYPES[g].bytes())]);
                RandomGradients.fill(TYPES[g], in[g][q], counts[g],
                        new SplittableRandom(SEED + 1_000_003L * iteration + 7919L * g + q));
            }
        }
        return in;
    }

    private static long align(long at, int bytes) {
        return (at + bytes - 1) / bytes * bytes;
    }
}
