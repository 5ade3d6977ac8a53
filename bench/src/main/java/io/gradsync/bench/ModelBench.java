package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.bucket.BucketSync;
import io.gradsync.sync.bucket.GradientBuckets;
import io.gradsync.sync.bucket.MixedModel;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A model of many mixed-size tensors synchronized through {@link GradientBuckets}, against one
 * flat buffer of the same total size on the same synchronizer: the speed goal is that
 * buckets reach at least 95% of the flat buffer's throughput ({@link #GOAL}).
 *
 * <p>Three forms, timed from the host like {@link SyncBench} and interleaved call by call, so
 * that drift (clocks, other load) falls on all three alike rather than on whichever ran last:
 * <ul>
 * <li>{@code flat}: one {@code synchronize} of one buffer holding the whole model;
 * <li>{@code bucket-step}: every parameter marked ready through {@link BucketSync#markReady} in
 *     backward order, then {@link BucketSync#finish()}, as a training loop calls them (no backward
 *     runs in between here, so nothing hides the collectives);
 * <li>{@code bucket-sync}: {@link BucketSync#synchronize()}, the synchronous path;
 * <li>{@code sharded-step} (several replicas; with the norm where the others have it): the same model in sharded buckets
 *     ({@link GradientBuckets.Builder#sharded}), marked ready and finished (each bucket
 *     reduce-scattered), then the parameters' all-gather ({@link BucketSync#allGather}) into a
 *     bucket set of the same layout: ZeRO-2's sync, the same bytes as the average.
 * </ul>
 * Throughput is the model's bytes (without the alignment gaps buckets add) over the median time.
 */
public final class ModelBench {
    /** Buckets must reach this share of the flat buffer's throughput. */
    public static final double GOAL = 0.95;
    /** Calls per form behind a --profile line: the per-phase means settle after a few. */
    private static final int PROFILE_CALLS = 3;

    private ModelBench() {
    }

    /**
     * One backend and dtype: the model, its buckets, and the three forms' timings.
     *
     * @param bytes        the model's bytes per replica, the flat buffer's size
     * @param paddedBytes  the buckets' bytes per replica: the model plus alignment gaps
     * @param bucketBytes  the bucket size cap asked for
     * @param wrongFlat    elements of the flat buffer off the float64 average after one call; -1 unchecked
     * @param wrongBuckets parameters' elements off the float64 average after one bucketed step; -1 unchecked
     * @param norm         the bucketed forms also computed the global norm and finite check (then the
     *                     goal does not apply: the flat buffer only averages)
     * @param sharded      the sharded step's timing; null where it was not run (one replica)
     */
    public record Result(SyncBackend backend, String runtime, int replicas, DType dtype, long bytes, int tensors,
            int buckets, long bucketBytes, long paddedBytes, long largestBytes, long seed, int iterations,
            Timing flat, Timing step, Timing sync, long wrongFlat, long wrongBuckets, boolean norm, Timing sharded) {

        /** Sharded step time over the unsharded bucket step's (the goal: within 2%, at most 1.02); NaN where not run. */
        public double shardedOverStep() {
            return sharded == null ? Double.NaN : sharded.medianMicros() / step.medianMicros();
        }

        public double algbwGBs(Timing t) {
            return bytes / (t.medianMicros() * 1e3);
        }

        /** nccl-tests' bus bandwidth, as in {@link SyncMeasurement#busbwGBs()}. */
        public double busbwGBs(Timing t) {
            return replicas <= 1 ? algbwGBs(t) : algbwGBs(t) * 2.0 * (replicas - 1) / replicas;
        }

        /** Bucket-step throughput over flat throughput (the same bytes, so flat time / step time). */
        public double stepRatio() {
            return flat.medianMicros() / step.medianMicros();
        }

        public double syncRatio() {
            return flat.medianMicros() / sync.medianMicros();
        }

        /** The goal is about the training loop's path, markReady + finish, averaging only. */
        public boolean goalMet() {
            return !norm && stepRatio() >= GOAL;
        }

        /** "met" or "MISSED" for {@code ratio}; "-" where the goal does not apply (with the norm). */
        public String verdict(double ratio) {
            return norm ? "-" : ratio >= GOAL ? "met" : "MISSED";
        }

        /** Both checks together; -1 when unchecked. */
        public long wrong() {
            return wrongFlat < 0 ? -1 : wrongFlat + wrongBuckets;
        }
    }

    /**
     * Builds {@code model}'s buckets and a flat buffer on every device, fills both with the same
     * random values per replica, runs each once (checked against the float64 average when
     * {@code check}), then warm-up and timed calls.
     *
     * @param norm    the bucketed forms also compute the global norm and finite check
     * @param seed    random values; replica q gets {@code seed + q}, so ranks of a multi-process
     *                run can regenerate each other's inputs
     * @param profile receives one line per form with where the time went, or null
     */
    public static Result measure(GradientSynchronizer sync, List<? extends Device> devices, MixedModel model,
            long bucketBytes, boolean norm, int warmup, int iterations, boolean check, long seed, Consumer<String> profile) {
        DType dtype = model.dtype();
        long bytes = model.totalBytes();
        long count = model.totalCount();
        long[] offsets = model.denseOffsets();
        List<DeviceBuffer> flat = new ArrayList<>();
        List<HostBuffer> inputs = new ArrayList<>();
        boolean shard = sync.worldSize() > 1;
        try (Arena arena = Arena.ofShared();
                GradientBuckets buckets = model.buckets(devices, bucketBytes);
                BucketSync bucketSync = new BucketSync(buckets, sync,
                        norm ? BucketSync.Options.averageOnly().withNorm() : BucketSync.Options.averageOnly());
                GradientBuckets shardedGrads = shard ? model.register(GradientBuckets.builder(devices).bucketBytes(bucketBytes)
                        .sharded(sync)).build() : null;
                GradientBuckets shardedParams = shard ? shardedGrads.sameLayout() : null;
                BucketSync shardedSync = shard ? new BucketSync(shardedGrads, sync,
                        norm ? BucketSync.Options.averageOnly().withNorm() : BucketSync.Options.averageOnly()) : null) {
            List<Replica> flatReplicas = SyncBench.flatReplicas(sync, devices, "model", dtype, count, seed, flat, inputs);
            for (int r = 0; r < devices.size(); r++) {
                HostBuffer host = inputs.get(r);
                // the same values into each parameter's bucket view as into the flat buffer
                try (DeviceStream s = devices.get(r).createStream()) {
                    for (int i = 0; i < model.size(); i++) {
                        Gradient g = buckets.gradient(r, model.parameters().get(i).name());
                        s.copyFromHost(host, offsets[i], g.buffer(), g.byteOffset(), g.byteSize());
                    }
                    s.synchronize();
                }
            }
            Runnable flatCall = () -> sync.synchronize(flatReplicas);
            Runnable stepCall = () -> {
                for (MixedModel.Parameter p : model.backwardOrder()) {
                    bucketSync.markReady(p.name());
                }
                bucketSync.finish();
            };
            Runnable syncCall = bucketSync::synchronize;
            Runnable shardedCall = () -> {
                for (MixedModel.Parameter p : model.backwardOrder()) {
                    shardedSync.markReady(p.name());
                }
                shardedSync.finish();
                shardedSync.allGather(shardedParams);
            };

            flatCall.run();
            stepCall.run();
            long wrongFlat = -1;
            long wrongBuckets = -1;
            if (check) {
                List<MemorySegment> all = SyncBench.allInputs(sync, devices, inputs, dtype, count, seed, arena);
                wrongFlat = SyncBench.countWrong(dtype, devices, flat, all, count);
                wrongBuckets = 0;
                for (int r = 0; r < devices.size(); r++) {
                    wrongBuckets += countWrongParameters(buckets, r, model, offsets, all);
                }
            }
            inputs.forEach(HostBuffer::close); // not needed past the check: give the memory back before timing
            inputs.clear();

            Runnable[] forms = shard ? new Runnable[] {flatCall, stepCall, syncCall, shardedCall} : new Runnable[] {flatCall, stepCall, syncCall};
            Warmup.run(sync.worldSize() == devices.size(), warmup, forms.length * bytes, () -> {
                for (Runnable f : forms) {
                    f.run();
                }
            });
            double[][] micros = new double[forms.length][iterations];
            for (int i = 0; i < iterations; i++) {
                for (int f = 0; f < forms.length; f++) {
                    long t0 = System.nanoTime();
                    forms[f].run();
                    micros[f][i] = (System.nanoTime() - t0) / 1e3;
                }
            }
            if (profile != null) {
                String[] names = {"flat", "bucket-step", "bucket-sync", "sharded-step"};
                for (int f = 0; f < forms.length; f++) {
                    sync.stats().reset();
                    for (int i = 0; i < PROFILE_CALLS; i++) {
                        forms[f].run();
                    }
                    profile.accept(names[f] + ": " + sync.stats().describe());
                }
            }
            long padded = buckets.buckets().stream().mapToLong(GradientBuckets.Bucket::byteSize).sum();
            return new Result(sync.backend(), devices.getFirst().runtime().label(), sync.worldSize(), dtype, bytes,
                    model.size(), buckets.buckets().size(), bucketBytes, padded, model.largest().byteSize(), model.seed(),
                    iterations, Timing.of(micros[0]), Timing.of(micros[1]), Timing.of(micros[2]), wrongFlat, wrongBuckets, norm,
                    shard ? Timing.of(micros[3]) : null);
        } finally {
            flat.forEach(DeviceBuffer::close);
            inputs.forEach(HostBuffer::close);
        }
    }

    /** Replica {@code r}'s parameters, read from their bucket views into the dense layout, against the float64 average. */
    private static long countWrongParameters(GradientBuckets buckets, int r, MixedModel model, long[] offsets,
            List<MemorySegment> inputs) {
        Device d = buckets.devices().get(r);
        try (HostBuffer out = d.allocateHost(model.totalBytes()); DeviceStream s = d.createStream()) {
            for (int i = 0; i < model.size(); i++) {
                Gradient g = buckets.gradient(r, model.parameters().get(i).name());
                s.copyToHost(g.buffer(), g.byteOffset(), out, offsets[i], g.byteSize());
            }
            s.synchronize();
            return SyncBench.countWrong(model.dtype(), inputs, out.segment(), model.totalCount());
        }
    }
}
