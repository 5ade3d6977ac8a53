package io.gradsync.sync.bucket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.Shards;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.backend.ptx.PtxOnJvm;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sharded buckets (ZeRO-2): a step reduce-scatters every bucket, so each replica's shard holds the
 * bits the unsharded step's average holds and everything else is as backward wrote it; the
 * parameters' all-gather gives every replica every shard. Misuse fails before anything moves.
 */
class ShardedBucketsTest {
    private final List<Device> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(Device::close);
    }

    private List<? extends Device> devices(String backend, int n) {
        List<? extends Device> d;
        if (backend.equals("opencl")) {
            assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
            d = OpenClRuntime.logicalDevices(n);
        } else {
            d = JvmRuntime.createDevices(n);
        }
        opened.addAll(d);
        return d;
    }

    private static GradientSynchronizer synchronizer(String backend, List<? extends Device> devices) {
        return backend.equals("ptx schedule") ? PtxOnJvm.schedule(devices, PtxOptions.defaults(), true, true)
                : Synchronizers.create(SyncBackend.parse(backend), devices);
    }

    static Stream<String> backends() {
        return Stream.of("cpu", "ptx schedule", "opencl");
    }

    @ParameterizedTest
    @MethodSource("backends")
    void aShardedStepLeavesEachShardTheUnshardedAverage(String backend) {
        List<? extends Device> devices = devices(backend, 3);
        List<BucketSyncTest.Param> params = BucketSyncTest.mixedModel(5, 40, 2L << 20);
        try (GradientSynchronizer sync = synchronizer(backend, devices);
             GradientBuckets sharded = sharded(devices, params, sync);
             GradientBuckets whole = BucketSyncTest.buckets(devices, params, 256 << 10);
             BucketSync shardedStep = new BucketSync(sharded, sync, BucketSync.Options.averageOnly());
             BucketSync wholeStep = new BucketSync(whole, sync, BucketSync.Options.averageOnly())) {
            assertTrue(sharded.buckets().size() > 3, "several buckets, got " + sharded.buckets().size());
            for (int step = 0; step < 2; step++) {
                BucketSyncTest.fillRandom(sharded, params, 40 + step);
                BucketSyncTest.fillRandom(whole, params, 40 + step);
                List<MemorySegment> before = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    before.add(readAll(sharded, r));
                }
                for (int i = params.size() - 1; i >= 0; i--) {
                    shardedStep.markReady(params.get(i).name());
                }
                shardedStep.finish();
                wholeStep.synchronize();
                for (int r = 0; r < 3; r++) {
                    for (GradientBuckets.Bucket b : sharded.buckets()) {
                        Shards own = sharded.shardRange(r, b.index());
                        long size = b.dtype().bytes();
                        MemorySegment got = BucketSyncTest.read(sharded.bucketGradient(r, b.index()));
                        MemorySegment in = slice(before.get(r), sharded, r, b.index());
                        for (String p : b.parameters()) {
                            long at = sharded.gradient(r, p).byteOffset() - sharded.bucketGradient(r, b.index()).byteOffset();
                            long bytes = sharded.gradient(r, p).byteSize();
                            MemorySegment avg = BucketSyncTest.read(whole.gradient(r, p));
                            for (long e = at / size; e < (at + bytes) / size; e++) {
                                boolean mine = e >= own.offset() && e < own.end();
                                MemorySegment want = mine ? avg.asSlice(e * size - at, size) : in.asSlice(e * size, size);
                                if (got.asSlice(e * size, size).mismatch(want) >= 0) {
                                    throw new AssertionError(backend + ", step " + step + ", replica " + r + ", " + p + " element "
                                            + (e - at / size) + ": " + (mine ? "not the average" : "changed outside the shard"));
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("backends")
    void theParametersAllGatherGivesEveryReplicaEveryShard(String backend) {
        List<? extends Device> devices = devices(backend, 3);
        List<BucketSyncTest.Param> params = BucketSyncTest.mixedModel(6, 25, 1L << 20);
        try (GradientSynchronizer sync = synchronizer(backend, devices);
             GradientBuckets grads = sharded(devices, params, sync);
             GradientBuckets weights = grads.sameLayout();
             BucketSync step = new BucketSync(grads, sync, BucketSync.Options.averageOnly())) {
            assertTrue(weights.hasLayoutOf(grads));
            BucketSyncTest.fillRandom(weights, params, 7);
            List<MemorySegment> before = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                before.add(readAll(weights, r));
            }
            if (backend.equals("cpu")) {
                step.allGatherAsync(weights).await(); // the same, queued
            } else {
                step.allGather(weights);
            }
            for (int r = 0; r < 3; r++) {
                MemorySegment got = readAll(weights, r);
                for (GradientBuckets.Bucket b : weights.buckets()) {
                    for (int owner = 0; owner < 3; owner++) {
                        Gradient s = weights.shard(owner, b.index());
                        long from = s.byteOffset() - weights.bucketGradient(owner, 0).byteOffset();
                        long at = got.asSlice(from, s.byteSize()).mismatch(before.get(owner).asSlice(from, s.byteSize()));
                        assertEquals(-1, at, backend + ": replica " + r + ", bucket " + b.index() + ": shard " + owner + " not replica "
                                + owner + "'s");
                    }
                }
            }
        }
    }

    /**
     * The norm of a sharded step is the unsharded step's (up to the order of its float64 additions),
     * the same on every replica; clipping scales each shard's average as the unsharded step scales
     * it and leaves the rest as backward wrote it; a NaN anywhere makes the step not finite, unclipped.
     */
    @ParameterizedTest
    @MethodSource("backends")
    void theNormAndClippingCoverEveryShard(String backend) {
        List<? extends Device> devices = devices(backend, 3);
        normAndClipping(backend, devices, synchronizer(backend, devices));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ptx", "cpu"})
    @Tag("gpu")
    void theNormAndClippingCoverEveryShardOnGpus(String backend) {
        assumeTrue(CudaRuntime.status().available(), () -> CudaRuntime.status().describe());
        List<? extends Device> devices = CudaRuntime.logicalDevices(3, 1);
        normAndClipping(backend + " on GPUs", devices, Synchronizers.create(SyncBackend.parse(backend), devices));
    }

    private static void normAndClipping(String backend, List<? extends Device> devices, GradientSynchronizer synchronizer) {
        List<BucketSyncTest.Param> params = BucketSyncTest.mixedModel(9, 30, 1L << 20);
        try (GradientSynchronizer sync = synchronizer;
             GradientBuckets clipped = sharded(devices, params, sync);
             GradientBuckets plain = sharded(devices, params, sync);
             GradientBuckets whole = BucketSyncTest.buckets(devices, params, 256 << 10);
             BucketSync wholeStep = new BucketSync(whole, sync, BucketSync.Options.averageOnly().withNorm());
             BucketSync plainStep = new BucketSync(plain, sync, BucketSync.Options.averageOnly().withNorm())) {
            BucketSyncTest.fillRandom(whole, params, 91);
            BucketSyncTest.fillRandom(plain, params, 91);
            List<List<MemorySegment>> inputs = BucketSyncTest.fillRandom(clipped, params, 91);
            double norm = wholeStep.synchronize().globalNorm();
            BucketSync.StepResult unclipped = plainStep.synchronize();
            assertTrue(unclipped.finite());
            assertEquals(norm, unclipped.globalNorm(), 1e-12 * norm, backend + ": the sharded norm is the unsharded one");
            try (BucketSync clipStep = new BucketSync(clipped, sync, BucketSync.Options.averageOnly().withClipping(norm / 3))) {
                BucketSync.StepResult r = clipStep.synchronize();
                assertEquals(unclipped.globalNorm(), r.globalNorm(), "the same sums: the same norm");
                assertTrue(r.clipScale() < 0.34 && r.clipScale() > 0.33, "scale " + r.clipScale());
                for (int rep = 0; rep < 3; rep++) {
                    for (GradientBuckets.Bucket b : clipped.buckets()) {
                        Shards own = clipped.shardRange(rep, b.index());
                        MemorySegment want = BucketSyncTest.read(plain.bucketGradient(rep, b.index()));
                        io.gradsync.sync.internal.HostAverage.scale(b.dtype(), want, own.offset(), own.end(), (float) r.clipScale());
                        MemorySegment got = BucketSyncTest.read(clipped.bucketGradient(rep, b.index()));
                        long at = got.mismatch(want);
                        assertEquals(-1, at, backend + ": replica " + rep + ", bucket " + b.index() + ", byte " + at
                                + " (shard " + own + "): not the clipped average inside the shard, or changed outside it");
                    }
                }
                // a NaN in one replica's gradient: the norm is NaN on every replica and nothing is scaled
                MemorySegment poisoned = inputs.get(2).get(0);
                BucketSyncTest.Param first = params.get(0);
                BucketSyncTest.fillRandom(clipped, params, 92);
                poisoned.fill((byte) 0xFF); // all ones: a NaN in every type
                BucketSyncTest.write(clipped.gradient(2, first.name()), poisoned);
                BucketSync.StepResult bad = clipStep.synchronize();
                assertTrue(!bad.finite() && Double.isNaN(bad.globalNorm()) && bad.clipScale() == 1, backend + ": " + bad);
            }
        }
    }

    @Test
    void shardsAreAlignedAndOfOneSize() {
        List<? extends Device> devices = devices("jvm", 3);
        try (GradientBuckets b = GradientBuckets.builder(devices).bucketBytes(4096).sharded(3, 0)
                .add("a", 1001, DType.BF16).add("b", 3, DType.FP32).add("c", 777, DType.FP32).build()) {
            for (GradientBuckets.Bucket bucket : b.buckets()) {
                assertEquals(0, bucket.count() % 3, "bucket " + bucket.index() + " holds whole shards");
                long size = -1;
                for (int r = 0; r < 3; r++) {
                    Gradient s = b.shard(r, bucket.index());
                    assertEquals(0, s.byteOffset() % GradientBuckets.ALIGN_BYTES, "shard " + r + " starts aligned");
                    assertTrue(size < 0 || size == s.count());
                    size = s.count();
                    assertEquals(Shards.range(bucket.count(), 3, r), b.shardRange(r, bucket.index()));
                }
            }
        }
    }

    @Test
    void misuseIsRefusedBeforeAnythingMoves() {
        List<? extends Device> devices = devices("jvm", 3);
        List<BucketSyncTest.Param> params = BucketSyncTest.mixedModel(8, 10, 256 << 10);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
             GradientBuckets sharded = sharded(devices, params, sync);
             GradientBuckets unsharded = BucketSyncTest.buckets(devices, params, 64 << 10);
             GradientBuckets otherWorld = shardedOver(devices, params, 4);
             BucketSync step = new BucketSync(sharded, sync, BucketSync.Options.averageOnly());
             BucketSync plain = new BucketSync(unsharded, sync, BucketSync.Options.averageOnly())) {
            IllegalArgumentException world = assertThrows(IllegalArgumentException.class,
                    () -> new BucketSync(otherWorld, sync, BucketSync.Options.averageOnly()));
            assertTrue(world.getMessage().contains("cut over 4 replicas") && world.getMessage().contains("works on 3"), world.getMessage());
            IllegalStateException notSharded = assertThrows(IllegalStateException.class, () -> plain.allGather(unsharded));
            assertTrue(notSharded.getMessage().contains("not sharded"), notSharded.getMessage());
            assertThrows(IllegalStateException.class, () -> unsharded.shard(0, 0));
            IllegalArgumentException layout = assertThrows(IllegalArgumentException.class, () -> step.allGather(otherWorld));
            assertTrue(layout.getMessage().contains("sameLayout()"), layout.getMessage());
            assertThrows(IllegalArgumentException.class, () -> step.allGather(sharded), "the gradients are no parameters");
            try (GradientBuckets weights = sharded.sameLayout()) {
                BucketSyncTest.fillRandom(weights, params, 3);
                MemorySegment before = readAll(weights, 1);
                step.markReady(params.getFirst().name());
                IllegalStateException midStep = assertThrows(IllegalStateException.class, () -> step.allGather(weights));
                assertTrue(midStep.getMessage().contains("a step is under way"), midStep.getMessage());
                assertEquals(-1, readAll(weights, 1).mismatch(before), "nothing moved");
                step.markAllReady();
                step.finish();
            }
        }
    }

    private static GradientBuckets sharded(List<? extends Device> devices, List<BucketSyncTest.Param> params, GradientSynchronizer sync) {
        GradientBuckets.Builder b = GradientBuckets.builder(devices).bucketBytes(256 << 10).sharded(sync);
        params.forEach(p -> b.add(p.name(), p.count(), p.dtype()));
        return b.build();
    }

    private static GradientBuckets shardedOver(List<? extends Device> devices, List<BucketSyncTest.Param> params, int world) {
        GradientBuckets.Builder b = GradientBuckets.builder(devices).bucketBytes(64 << 10).sharded(world, 0);
        params.forEach(p -> b.add(p.name(), p.count(), p.dtype()));
        return b.build();
    }

    /** Replica r's whole buffer: every bucket, back to back. */
    private static MemorySegment readAll(GradientBuckets b, int r) {
        GradientBuckets.Bucket last = b.buckets().getLast();
        Gradient first = b.bucketGradient(r, 0);
        Gradient end = b.bucketGradient(r, last.index());
        long bytes = end.byteOffset() + end.byteSize() - first.byteOffset();
        return BucketSyncTest.read(new Gradient("all", first.buffer(), first.byteOffset(), bytes / 2, DType.BF16));
    }

    /** Bucket {@code bucket}'s bytes within {@link #readAll}'s copy. */
    private static MemorySegment slice(MemorySegment all, GradientBuckets b, int r, int bucket) {
        Gradient g = b.bucketGradient(r, bucket);
        return all.asSlice(g.byteOffset() - b.bucketGradient(r, 0).byteOffset(), g.byteSize());
    }
}
