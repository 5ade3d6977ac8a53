package io.gradsync.sync.bucket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.sync.verify.RandomGradients;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Buckets through the cpu backend on JVM devices: same bits as one collective per tensor, and the step contract. */
class BucketSyncTest {
    private static final SyncOptions SMALL = new SyncOptions(64 << 10, 4, 2);

    private List<JvmDevice> devices = List.of();

    @AfterEach
    void closeDevices() {
        devices.forEach(JvmDevice::close);
    }

    /**
     * Hundreds of tensors from 1 element to millions (the bench's {@link MixedModel}), one in five
     * of them re-typed to a random dtype so that buckets also split on dtype.
     */
    static List<Param> mixedModel(long seed, int tensors, long totalBytes) {
        SplittableRandom random = new SplittableRandom(seed);
        DType[] types = DType.values();
        List<Param> params = new ArrayList<>();
        List<MixedModel.Parameter> model = MixedModel.generate(seed, tensors, totalBytes, DType.FP32).parameters();
        for (int i = 0; i < model.size(); i++) {
            DType t = i % 50 < 40 ? DType.FP32 : types[random.nextInt(types.length)];
            params.add(new Param(model.get(i).name(), model.get(i).count(), t));
        }
        return params;
    }

    record Param(String name, long count, DType dtype) {
    }

    /** {@code inner}, running {@code before} ahead of each of its calls (to record or hold them); closing it leaves inner open. */
    static GradientSynchronizer beforeEachCall(GradientSynchronizer inner, java.util.function.Consumer<List<Replica>> before) {
        return new GradientSynchronizer() {
            public SyncBackend backend() { return inner.backend(); }
            public int localRank() { return inner.localRank(); }
            public int rank() { return inner.rank(); }
            public int worldSize() { return inner.worldSize(); }
            public io.gradsync.sync.SyncStats stats() { return inner.stats(); }
            public void barrier() { inner.barrier(); }
            public void close() { }
            public void synchronize(List<Replica> replicas) {
                before.accept(replicas);
                inner.synchronize(replicas);
            }
            public void broadcast(List<Replica> replicas, int root) {
                before.accept(replicas);
                inner.broadcast(replicas, root);
            }
            public void reduceScatter(List<Replica> replicas) {
                before.accept(replicas);
                inner.reduceScatter(replicas);
            }
            public void allGather(List<Replica> replicas) {
                before.accept(replicas);
                inner.allGather(replicas);
            }
        };
    }

    static GradientBuckets buckets(List<? extends Device> devices, List<Param> params, long bucketBytes) {
        GradientBuckets.Builder b = GradientBuckets.builder(devices).bucketBytes(bucketBytes);
        params.forEach(p -> b.add(p.name(), p.count(), p.dtype()));
        return b.build();
    }

    /** Random values for every parameter of every replica, written into the views; returned for checking. */
    static List<List<MemorySegment>> fillRandom(GradientBuckets buckets, List<Param> params, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<List<MemorySegment>> inputs = new ArrayList<>();
        for (int r = 0; r < buckets.devices().size(); r++) {
            List<MemorySegment> perParam = new ArrayList<>();
            for (Param p : params) {
                MemorySegment host = java.lang.foreign.Arena.ofAuto().allocate(p.count() * p.dtype().bytes(), 8);
                RandomGradients.fill(p.dtype(), host, p.count(), random);
                write(buckets.gradient(r, p.name()), host);
                perParam.add(host);
            }
            inputs.add(perParam);
        }
        return inputs;
    }

    static void write(Gradient g, MemorySegment values) {
        Device d = g.buffer().device();
        try (HostBuffer h = d.allocateHost(g.byteSize()); DeviceStream s = d.createStream()) {
            h.segment().copyFrom(values.asSlice(0, g.byteSize()));
            s.copyFromHost(h, 0, g.buffer(), g.byteOffset(), g.byteSize());
            s.synchronize();
        }
    }

    static MemorySegment read(Gradient g) {
        Device d = g.buffer().device();
        MemorySegment out = java.lang.foreign.Arena.ofAuto().allocate(Math.max(1, g.byteSize()), 8);
        try (HostBuffer h = d.allocateHost(g.byteSize()); DeviceStream s = d.createStream()) {
            s.copyToHost(g.buffer(), g.byteOffset(), h, 0, g.byteSize());
            s.synchronize();
            out.copyFrom(h.segment().asSlice(0, g.byteSize()));
        }
        return out;
    }

    @Test
    void bucketedSyncGivesExactlyThePerTensorResult() {
        devices = JvmRuntime.createDevices(3);
        List<Param> params = mixedModel(11, 301, 24L << 20); // 1..190K elements and a 1.6M embedding
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets bucketed = buckets(devices, params, 1 << 20);
                GradientBuckets reference = buckets(devices, params, 1 << 20);
                BucketSync overlapped = new BucketSync(bucketed, sync, BucketSync.Options.averageOnly())) {
            assertTrue(bucketed.buckets().size() > 5, "the test must span many buckets, got " + bucketed.buckets().size());
            List<List<MemorySegment>> inputs = fillRandom(bucketed, params, 99);
            fillRandom(reference, params, 99);

            // reference: one collective per tensor, the synchronous API
            sync.synchronize(reference.parameterReplicas());
            // buckets: marked as backward would, last parameter first
            for (int i = params.size() - 1; i >= 0; i--) {
                overlapped.markReady(params.get(i).name());
            }
            BucketSync.StepResult result = overlapped.finish();
            assertTrue(result.finite());
            assertTrue(Double.isNaN(result.globalNorm()), "no norm asked for");

            for (int r = 0; r < devices.size(); r++) {
                for (int i = 0; i < params.size(); i++) {
                    Param p = params.get(i);
                    MemorySegment got = read(bucketed.gradient(r, p.name()));
                    MemorySegment want = read(reference.gradient(r, p.name()));
                    assertEquals(-1L, got.mismatch(want), () -> p + " on replica differs from the per-tensor sync");
                    if (r == 0) {
                        MemorySegment[] in = inputs.stream().map(l -> l.get(params.indexOf(p))).toArray(MemorySegment[]::new);
                        assertEquals(0, AverageCheck.countWrong(p.dtype(), in, got, p.count()), p + " is not the average");
                    }
                }
            }
        }
    }

    @Test
    void bucketsFillInReverseRegistrationOrderAndRespectTheCapAndDtype() {
        devices = JvmRuntime.createDevices(2);
        try (GradientBuckets b = GradientBuckets.builder(devices).bucketBytes(4096)
                .add("a", 100, DType.FP32)      // 400 B
                .add("b", 2000, DType.FP32)     // 8000 B: larger than the cap, a bucket of its own
                .add("c", 10, DType.BF16)
                .add("d", 300, DType.FP32)
                .add("e", 500, DType.FP32)
                .build()) {
            List<List<String>> layout = b.buckets().stream().map(GradientBuckets.Bucket::parameters).toList();
            assertEquals(List.of(List.of("e", "d"), List.of("c"), List.of("b"), List.of("a")), layout);
            assertEquals(0, b.gradient(1, "e").byteOffset());
            assertEquals(2048, b.gradient(1, "d").byteOffset(), "views start on 256-byte boundaries");
            assertEquals(DType.BF16, b.bucketOf("c").dtype());
            assertEquals(8192, b.bucketOf("b").byteSize());
            assertEquals(b.bucketGradient(1, 0).buffer(), b.gradient(1, "d").buffer(), "a view into the bucket, not a copy");
            assertEquals(3328, b.bucketGradient(1, 1).byteOffset(), "buckets lie back to back, each a whole 256 bytes");
            assertEquals(b.bucketGradient(1, 1).byteOffset(), b.gradient(1, "c").byteOffset());
            // consecutive buckets of one dtype as one range: b (8192 B) then a (400 B, 512 with its gap)
            Gradient span = b.spanReplicas(2, 3).get(1).gradients().getFirst();
            assertEquals(b.bucketGradient(1, 2).byteOffset(), span.byteOffset());
            assertEquals((8192 + 512) / 4, span.count());
            assertEquals(b.bucketReplicas(1), b.spanReplicas(1, 1));
            IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class, () -> b.spanReplicas(0, 2));
            assertTrue(mixed.getMessage().contains("FP32 and BF16"), mixed.getMessage());
            assertThrows(IllegalArgumentException.class, () -> b.spanReplicas(2, 4));
            assertThrows(IllegalArgumentException.class, () -> b.spanReplicas(3, 2));
            assertEquals(List.of("a", "b", "c", "d", "e"), b.parameters());
            MemorySegment ones = java.lang.foreign.Arena.ofAuto().allocate(300 * 4);
            ones.fill((byte) 1);
            write(b.gradient(1, "d"), ones);
            assertEquals(0x01010101, read(b.gradient(1, "d")).getAtIndex(ValueLayout.JAVA_INT, 299));
            b.zero();
            assertEquals(-1L, read(b.gradient(1, "d")).mismatch(java.lang.foreign.Arena.ofAuto().allocate(300 * 4)), "zeroed");
            IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> b.gradient(0, "f"));
            assertTrue(unknown.getMessage().contains("'f'"), unknown.getMessage());
        }
        assertThrows(IllegalArgumentException.class,
                () -> GradientBuckets.builder(devices).add("w", 1, DType.FP32).add("w", 2, DType.FP32));
        assertThrows(IllegalArgumentException.class, () -> GradientBuckets.builder(devices).add("w", 0, DType.FP32));
    }

    @Test
    void badStepsAreRejectedWithTheParametersNamedAndNothingChanges() {
        devices = JvmRuntime.createDevices(2);
        List<Param> params = List.of(new Param("w1", 1000, DType.FP32), new Param("b1", 10, DType.FP32),
                new Param("w2", 500, DType.FP32), new Param("b2", 5, DType.FP32));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets b = buckets(devices, params, 1024);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly())) {
            List<List<MemorySegment>> inputs = fillRandom(b, params, 5);
            IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> bs.markReady("w3"));
            assertTrue(unknown.getMessage().contains("unknown parameter 'w3'"), unknown.getMessage());
            IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> bs.markReady((String) null));
            assertTrue(none.getMessage().contains("unknown parameter 'null'"), none.getMessage());
            bs.markReady("b2");
            IllegalStateException twice = assertThrows(IllegalStateException.class, () -> bs.markReady("b2"));
            assertTrue(twice.getMessage().contains("'b2' is already marked ready"), twice.getMessage());
            bs.markReady("w2");
            IllegalStateException early = assertThrows(IllegalStateException.class, bs::finish);
            assertTrue(early.getMessage().contains("[w1, b1]"), early.getMessage());
            // the rejected finish kept the step: marking the rest completes it
            bs.markReady("b1");
            bs.markReady("w1");
            bs.finish();
            for (Param p : params) {
                MemorySegment[] in = {inputs.get(0).get(params.indexOf(p)), inputs.get(1).get(params.indexOf(p))};
                assertEquals(0, AverageCheck.countWrong(p.dtype(), in, read(b.gradient(1, p.name())), p.count()), p.name());
            }
            // a new step starts clean
            bs.markReady("w1");
            assertThrows(IllegalStateException.class, bs::finish);
        }
    }

    /**
     * Closing in the middle of a step waits for the calls the step started: the caller may free the
     * buckets right after, so once close returns every started average is complete.
     */
    @Test
    void closeWaitsForTheCallsOfAnUnfinishedStep() {
        devices = JvmRuntime.createDevices(2);
        List<Param> params = List.of(new Param("w", 1 << 20, DType.FP32), new Param("b", 10, DType.FP32));
        for (int round = 0; round < 3; round++) {
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                    GradientBuckets b = buckets(devices, params, 256 << 10)) {
                List<List<MemorySegment>> inputs = fillRandom(b, params, round);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly());
                bs.markReady("w"); // w's buckets start; the step is never finished
                bs.close();
                MemorySegment[] in = {inputs.get(0).getFirst(), inputs.get(1).getFirst()};
                for (int r = 0; r < 2; r++) {
                    assertEquals(0, AverageCheck.countWrong(DType.FP32, in, read(b.gradient(r, "w")), 1 << 20), "replica " + r + ", round " + round);
                }
            }
        }
    }

    /** A stream of another device object with the same id is told apart from a stream of another device. */
    @Test
    void useStreamsTellsAnotherDeviceObjectOfTheSameIdApart() {
        devices = JvmRuntime.createDevices(2);
        List<JvmDevice> others = JvmRuntime.createDevices(2); // jvm:0 and jvm:1 again, other objects
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets b = buckets(devices, List.of(new Param("w", 100, DType.FP32)), 1024);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly());
                DeviceStream same = others.get(0).createStream();
                DeviceStream swapped = devices.get(1).createStream();
                DeviceStream own = devices.get(1).createStream()) {
            IllegalArgumentException sameId = assertThrows(IllegalArgumentException.class, () -> bs.useStreams(List.of(same, own)));
            assertTrue(sameId.getMessage().contains("stream 0 is a stream of jvm:0, a different device object than the buckets' jvm:0"),
                    sameId.getMessage());
            IllegalArgumentException other = assertThrows(IllegalArgumentException.class, () -> bs.useStreams(List.of(swapped, own)));
            assertTrue(other.getMessage().contains("stream 0 is a stream of jvm:1, but replica 0 is on jvm:0"), other.getMessage());
        } finally {
            others.forEach(JvmDevice::close);
        }
    }

    /**
     * Single process: a burst of ready buckets shares one call (the linger waits for the rest of the
     * burst), and once every bucket is queued nothing more is waited for.
     */
    @Test
    void aBurstOfReadyBucketsSharesOneCall() {
        devices = JvmRuntime.createDevices(2);
        List<Param> params = mixedModel(3, 80, 1L << 20);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets b = buckets(devices, params, 64 << 10);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly().withLinger(java.time.Duration.ofSeconds(1)))) {
            assertTrue(b.buckets().size() > 4, "needs several buckets, got " + b.buckets().size());
            long t0 = System.nanoTime();
            for (int step = 0; step < 5; step++) {
                for (int i = params.size() - 1; i >= 0; i--) {
                    bs.markReady(params.get(i).name());
                }
                bs.finish();
            }
            assertEquals(5, sync.stats().calls(), "one call per step for " + b.buckets().size() + " buckets");
            // a linger that waited its full second after the last bucket would take 5 s here
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(4), "lingered although every bucket was queued");
        }
        assertThrows(IllegalArgumentException.class, () -> BucketSync.Options.averageOnly().withLinger(java.time.Duration.ofSeconds(2)));
        assertThrows(IllegalArgumentException.class, () -> BucketSync.Options.averageOnly().withLinger(java.time.Duration.ofNanos(-1)));
    }

    /**
     * Buckets lie back to back: a burst of ready buckets goes to the synchronizer as one range per
     * run of consecutive buckets of one dtype (here: 3 runs, FP32 / BF16 / FP32), with exactly the
     * per-tensor result, and the gaps between views stay zero.
     */
    @Test
    void readyBucketsGoAsOneRangePerDtypeRun() {
        devices = JvmRuntime.createDevices(2);
        List<Param> params = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(4);
        for (int i = 0; i < 60; i++) { // registration order; backward (bucket) order is the reverse
            params.add(new Param("p" + i, 1 + random.nextInt(3000), i >= 20 && i < 30 ? DType.BF16 : DType.FP32));
        }
        List<List<Integer>> gradientsPerCall = new ArrayList<>();
        try (GradientSynchronizer cpu = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets bucketed = buckets(devices, params, 4 << 10);
                GradientBuckets reference = buckets(devices, params, 4 << 10)) {
            GradientSynchronizer recording = beforeEachCall(cpu, replicas -> {
                synchronized (gradientsPerCall) {
                    gradientsPerCall.add(replicas.getFirst().gradients().stream().map(g -> Math.toIntExact(g.count())).toList());
                }
            });
            assertTrue(bucketed.buckets().size() > 6, "needs several buckets per run, got " + bucketed.buckets().size());
            List<List<MemorySegment>> inputs = fillRandom(bucketed, params, 8);
            fillRandom(reference, params, 8);
            cpu.synchronize(reference.parameterReplicas());
            try (BucketSync bs = new BucketSync(bucketed, recording,
                    BucketSync.Options.averageOnly().withLinger(java.time.Duration.ofSeconds(1)))) {
                for (int i = params.size() - 1; i >= 0; i--) {
                    bs.markReady(params.get(i).name());
                }
                bs.finish();
            }
            assertEquals(1, gradientsPerCall.size(), "one call for the burst: " + gradientsPerCall);
            long fp32 = 0;
            long bf16 = 0;
            for (GradientBuckets.Bucket b : bucketed.buckets()) {
                if (b.dtype() == DType.BF16) {
                    bf16 += b.count();
                } else if (bf16 == 0) {
                    fp32 += b.count();
                }
            }
            List<Integer> ranges = gradientsPerCall.getFirst();
            assertEquals(3, ranges.size(), "FP32, BF16, FP32 runs: " + ranges);
            assertEquals(List.of((int) fp32, (int) bf16), ranges.subList(0, 2), "each run is one range of whole buckets");
            for (int r = 0; r < devices.size(); r++) {
                for (Param p : params) {
                    assertEquals(-1L, read(bucketed.gradient(r, p.name())).mismatch(read(reference.gradient(r, p.name()))),
                            () -> p + " differs from the per-tensor sync");
                }
            }
            MemorySegment[] in = inputs.stream().map(l -> l.get(0)).toArray(MemorySegment[]::new);
            assertEquals(0, AverageCheck.countWrong(DType.FP32, in, read(bucketed.gradient(1, "p0")), params.get(0).count()));
            // the gaps: every byte of a bucket outside its views is still zero
            for (GradientBuckets.Bucket b : bucketed.buckets()) {
                MemorySegment whole = read(bucketed.bucketGradient(1, b.index()));
                long base = bucketed.bucketGradient(1, b.index()).byteOffset();
                long covered = 0;
                for (String name : b.parameters()) {
                    Gradient g = bucketed.gradient(1, name);
                    whole.asSlice(g.byteOffset() - base, g.byteSize()).fill((byte) 0);
                    covered += g.byteSize();
                }
                assertTrue(covered <= b.byteSize());
                assertEquals(-1L, whole.mismatch(java.lang.foreign.Arena.ofAuto().allocate(b.byteSize())), "gaps of bucket " + b.index());
            }
        }
    }

    /**
     * cpu sums the squares in its averaging pass: the norm equals a separate float64 pass over the
     * averaged buckets, and has the same bits whether the buckets went in one call or one by one.
     */
    @Test
    void theFusedNormMatchesASeparatePassAndDoesNotDependOnGrouping() {
        devices = JvmRuntime.createDevices(3);
        List<Param> params = mixedModel(9, 150, 3L << 20);
        double[] norms = new double[2];
        for (int run = 0; run < 2; run++) {
            // run 0: every bucket waits for the whole burst (one call); run 1: no linger (calls as they come)
            java.time.Duration linger = run == 0 ? java.time.Duration.ofSeconds(1) : java.time.Duration.ZERO;
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                    GradientBuckets b = buckets(devices, params, 128 << 10);
                    BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly().withNorm().withLinger(linger))) {
                assertTrue(sync instanceof io.gradsync.sync.FusedSumOfSquares, "cpu fuses the sum of squares");
                fillRandom(b, params, 21);
                for (int i = params.size() - 1; i >= 0; i--) {
                    bs.markReady(params.get(i).name());
                }
                BucketSync.StepResult result = bs.finish();
                assertTrue(result.finite());
                double separate = 0;
                for (Param p : params) {
                    MemorySegment v = read(b.gradient(0, p.name()));
                    for (long i = 0; i < p.count(); i++) {
                        double x = switch (p.dtype()) {
                            case FP32 -> v.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i);
                            case BF16 -> Float.intBitsToFloat((v.getAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i) & 0xFFFF) << 16);
                            case FP16 -> Float.float16ToFloat(v.getAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i));
                        };
                        separate += x * x;
                    }
                }
                assertEquals(Math.sqrt(separate), result.globalNorm(), 1e-12 * Math.sqrt(separate), "fused norm vs a separate pass");
                norms[run] = result.globalNorm();
            }
        }
        assertEquals(Double.doubleToRawLongBits(norms[0]), Double.doubleToRawLongBits(norms[1]),
                "one call or many: the same bits (" + norms[0] + " vs " + norms[1] + ")");
    }

    /** Single process: buckets that become ready while a call runs go together in the next call. */
    @Test
    void bucketsReadyDuringACallShareTheNextCall() throws Exception {
        devices = JvmRuntime.createDevices(3);
        List<Param> params = mixedModel(5, 120, 2L << 20);
        CountDownLatch firstCallStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        try (GradientSynchronizer cpu = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets bucketed = buckets(devices, params, 64 << 10);
                GradientBuckets reference = buckets(devices, params, 64 << 10)) {
            GradientSynchronizer held = beforeEachCall(cpu, replicas -> { // the first call waits until every bucket is ready
                if (calls.incrementAndGet() == 1) {
                    firstCallStarted.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            int buckets = bucketed.buckets().size();
            assertTrue(buckets > 4, "needs several buckets, got " + buckets);
            fillRandom(bucketed, params, 7);
            fillRandom(reference, params, 7);
            cpu.synchronize(reference.parameterReplicas());
            try (BucketSync bs = new BucketSync(bucketed, held, BucketSync.Options.averageOnly())) {
                for (int i = params.size() - 1; i >= 0; i--) {
                    bs.markReady(params.get(i).name());
                    if (i == params.size() - 1) {
                        assertTrue(firstCallStarted.await(20, TimeUnit.SECONDS));
                    }
                }
                release.countDown();
                bs.finish();
            }
            assertTrue(calls.get() < buckets && calls.get() >= 2, calls.get() + " calls for " + buckets + " buckets");
            for (int r = 0; r < devices.size(); r++) {
                for (Param p : params) {
                    assertEquals(-1L, read(bucketed.gradient(r, p.name())).mismatch(read(reference.gradient(r, p.name()))), p.name());
                }
            }
        }
    }

    @Test
    void aBucketStartsItsAllReduceAsSoonAsItsParametersAreReady() throws Exception {
        devices = JvmRuntime.createDevices(2);
        List<Param> params = List.of(new Param("w1", 4000, DType.FP32), new Param("w2", 4000, DType.FP32));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets b = buckets(devices, params, 16 << 10);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly())) {
            assertEquals(2, b.buckets().size());
            bs.markReady("w2"); // backward order: the last layer's bucket is complete
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (sync.stats().calls() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(1, sync.stats().calls(), "bucket of w2 must be averaged before w1 is ready and before finish");
            bs.markReady("w1");
            bs.finish();
            assertEquals(2, sync.stats().calls());
        }
    }

    @Test
    void clipsToTheGlobalNormAndReportsNonFiniteGradients() {
        devices = JvmRuntime.createDevices(2);
        List<Param> params = List.of(new Param("w", 3000, DType.FP32), new Param("h", 777, DType.BF16),
                new Param("b", 13, DType.FP32));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                GradientBuckets b = buckets(devices, params, 4096);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly().withClipping(1.5))) {
            List<List<MemorySegment>> inputs = fillRandom(b, params, 8);
            double expectedSquares = 0;
            List<double[]> averages = new ArrayList<>();
            for (Param p : params) {
                double[] avg = new double[(int) p.count()];
                for (int i = 0; i < avg.length; i++) {
                    avg[i] = (AverageCheck.get(p.dtype(), inputs.get(0).get(params.indexOf(p)), i)
                            + AverageCheck.get(p.dtype(), inputs.get(1).get(params.indexOf(p)), i)) / 2;
                }
                averages.add(avg);
            }
            for (double[] avg : averages) {
                for (double v : avg) {
                    expectedSquares += v * v;
                }
            }
            BucketSync.StepResult r = bs.synchronize();
            assertTrue(r.finite());
            assertTrue(r.globalNorm() > 1.5, "random gradients of thousands of elements have a norm above 1.5: " + r.globalNorm());
            assertEquals(Math.sqrt(expectedSquares), r.globalNorm(), 1e-3 * r.globalNorm(), "norm of the float64 average");
            double after = 0;
            for (int rep = 0; rep < 2; rep++) {
                double squares = 0;
                for (Param p : params) {
                    MemorySegment v = read(b.gradient(rep, p.name()));
                    for (int i = 0; i < p.count(); i++) {
                        squares += AverageCheck.get(p.dtype(), v, i) * AverageCheck.get(p.dtype(), v, i);
                    }
                }
                after = Math.sqrt(squares);
                assertEquals(1.5, after, 1.5e-2, "replica " + rep + " is clipped to the max norm");
            }

            // one NaN in one replica makes the average non-finite: reported, nothing scaled
            fillRandom(b, params, 9);
            MemorySegment nan = java.lang.foreign.Arena.ofAuto().allocate(4);
            nan.set(ValueLayout.JAVA_FLOAT, 0, Float.NaN);
            Gradient bias = b.gradient(1, "b");
            write(new Gradient("b", bias.buffer(), bias.byteOffset() + 8, 1, DType.FP32), nan);
            BucketSync.StepResult bad = bs.synchronize();
            assertFalse(bad.finite());
            assertEquals(1.0, bad.clipScale());
        }
    }

    @Test
    void aFailedCollectiveIsReportedByFinish() {
        devices = JvmRuntime.createDevices(2);
        List<Param> params = List.of(new Param("w", 100, DType.FP32));
        GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
        try (GradientBuckets b = buckets(devices, params, 4096);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly())) {
            sync.close(); // every later synchronize throws
            bs.markReady("w");
            BucketSyncException e = assertThrows(BucketSyncException.class, bs::finish);
            assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
            bs.markReady("w"); // the failed step is over; a new one may start
        }
    }


    /** Every element of replica {@code r}'s gradient {@code name} set to {@code v}. */
    private static void setAll(GradientBuckets b, int r, String name, float v) {
        Gradient g = b.gradient(r, name);
        MemorySegment m = ((io.gradsync.tasks.jvm.JvmBuffer) g.buffer()).segment();
        for (long i = 0; i < g.count(); i++) {
            m.setAtIndex(ValueLayout.JAVA_FLOAT, g.byteOffset() / 4 + i, v);
        }
    }

    private static float first(GradientBuckets b, int r, String name) {
        Gradient g = b.gradient(r, name);
        return ((io.gradsync.tasks.jvm.JvmBuffer) g.buffer()).segment().getAtIndex(ValueLayout.JAVA_FLOAT, g.byteOffset() / 4);
    }

    /**
     * finish() interrupted while its collectives run (a slow caller stream) leaves the step as it
     * was: calling finish() again ends it with the average, and the next step works. It reset the
     * step while a call still ran, whose late count went into the next step, whose finish() then
     * waited for ever (or returned with a bucket not averaged).
     */
    @Test
    void anInterruptedFinishLeavesTheStepToBeFinishedAgain() throws Exception {
        devices = JvmRuntime.createDevices(2);
        List<DeviceStream> streams = List.of(devices.get(0).createStream(), devices.get(1).createStream());
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                GradientBuckets b = GradientBuckets.builder(devices).bucketBytes(4 << 20).add("w1", 1 << 18, DType.FP32)
                        .add("w2", 1 << 18, DType.FP32).build();
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly().withLinger(java.time.Duration.ZERO))) {
            bs.useStreams(streams);
            for (int r = 0; r < 2; r++) {
                setAll(b, r, "w1", r);
                setAll(b, r, "w2", r);
            }
            ((io.gradsync.tasks.jvm.JvmStream) streams.get(0)).submit("slow backward", () -> {
                try {
                    Thread.sleep(600);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            bs.markReady("w2");
            bs.markReady("w1");
            io.gradsync.sync.Interrupts.after(Thread.currentThread(), 150);
            BucketSyncException e = assertThrows(BucketSyncException.class, bs::finish);
            assertTrue(e.getMessage().contains("call finish() again"), e.getMessage());
            assertTrue(Thread.interrupted(), "the interrupt status is kept");
            IllegalStateException early = assertThrows(IllegalStateException.class, () -> bs.markReady("w1"));
            assertTrue(early.getMessage().contains("finish() was interrupted"), early.getMessage());
            bs.finish(); // ends the step
            assertEquals(0.5f, first(b, 0, "w1"));
            assertEquals(0.5f, first(b, 1, "w2"));
            for (int step = 0; step < 2; step++) {
                for (int r = 0; r < 2; r++) {
                    setAll(b, r, "w1", 10 + r);
                    setAll(b, r, "w2", 10 + r);
                }
                bs.markReady("w2");
                bs.markReady("w1");
                bs.finish();
                for (int r = 0; r < 2; r++) {
                    assertEquals(10.5f, first(b, r, "w1"), "step " + step);
                    assertEquals(10.5f, first(b, r, "w2"), "step " + step);
                }
            }
        } finally {
            streams.forEach(DeviceStream::close);
        }
    }
}
