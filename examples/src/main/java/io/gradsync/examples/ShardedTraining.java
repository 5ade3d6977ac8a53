package io.gradsync.examples;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.bucket.BucketSync;
import io.gradsync.sync.bucket.GradientBuckets;
import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.ExecutionPlan;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Sharded data-parallel training (ZeRO-2) written against gradsync's exported API, beside the
 * same training unsharded, to show that they agree bit for bit.
 *
 * <p>The model is a linear regression ({@code w}, {@code b}) whose parameters and gradients live
 * in gradsync's buckets on every replica's device. Each replica draws its own initial weights; a
 * {@link GradientSynchronizer#broadcast broadcast} from replica 0 makes them equal. Per step every
 * replica computes the gradient of its shard of the batch (on the host, through copies: a stand-in
 * for a framework's backward) into its gradient buckets; then
 * <ul>
 * <li><b>sharded</b>: the buckets are reduce-scattered ({@link BucketSync} on buckets built
 * {@link GradientBuckets.Builder#sharded sharded}); each replica runs AdamW, a Java kernel, on its
 * shard of every bucket alone, with optimizer state ({@code m}, {@code v}) allocated for that
 * shard only (1/N of the model); then {@link BucketSync#allGather} gives every replica all the
 * updated parameters;</li>
 * <li><b>unsharded</b>: the buckets are averaged, and every replica runs the same AdamW kernel on
 * all of its parameters, with state for all of them.</li>
 * </ul>
 * The reduce-scatter's shards hold the average's very bits and AdamW works element by element, so
 * the two trajectories are the same to the bit: {@link #train} returns both and their difference.
 */
public final class ShardedTraining {
    static final float LR = 1e-2f;
    static final float DECAY = 0.01f;

    /**
     * @param backend  the synchronizer's backend ({@code cpu}, {@code ptx}, {@code opencl}, ...)
     * @param devices  one replica each
     * @param features the model's size ({@code features} weights and a bias)
     * @param batch    samples per step, split evenly over the replicas
     */
    public record Config(SyncBackend backend, List<? extends Device> devices, int steps, int features, int batch, long seed) {
        public Config {
            if (batch % devices.size() != 0) {
                throw new IllegalArgumentException("batch " + batch + " does not split evenly over " + devices.size() + " replicas");
            }
        }
    }

    /**
     * @param sharded        every replica's parameters after the sharded run, per parameter ({@code w}, {@code b})
     * @param unsharded      the same after the unsharded run
     * @param differingBits  elements, over every replica and parameter, whose bits differ between the two
     * @param optimizerState floats of AdamW state each replica held in the sharded run, and in the unsharded one
     */
    public record Result(List<float[][]> sharded, List<float[][]> unsharded, long differingBits, long[] optimizerState) {
    }

    private ShardedTraining() {
    }

    /**
     * {@code gradsync run -cp examples/target/gradsync-examples-VERSION.jar io.gradsync.examples.ShardedTraining [BACKEND [N]]}:
     * trains both ways on N replicas (default cpu, 2) and prints how they compare: on OpenCL devices
     * for {@code opencl}, on GPUs for {@code ptx} and {@code nccl}, else on the preferred runtime
     * (GPUs where there are, else JVM devices). Bad arguments, or devices that are not there: one
     * line on stderr, exit 2.
     */
    public static void main(String[] args) {
        SyncBackend backend;
        int n;
        List<? extends Device> devices;
        try {
            if (args.length > 2) {
                throw new IllegalArgumentException("takes [BACKEND [N]], got " + args.length + " arguments");
            }
            backend = SyncBackend.parse(args.length > 0 ? args[0] : "cpu");
            try {
                n = args.length > 1 ? Integer.parseInt(args[1].strip()) : 2;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("N must be a number of replicas, got '" + args[1] + "'");
            }
            io.gradsync.tasks.device.DeviceRuntime runtime = switch (backend) {
                case OPENCL -> io.gradsync.tasks.device.DeviceRuntime.OPENCL;
                case PTX, NCCL -> io.gradsync.tasks.device.DeviceRuntime.CUDA;
                default -> io.gradsync.tasks.DeviceCatalog.preferredRuntime();
            };
            devices = io.gradsync.tasks.DeviceCatalog.select(runtime, n);
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("ShardedTraining: " + e.getMessage() + " (usage: ShardedTraining [BACKEND [N]])");
            System.exit(2);
            return;
        }
        Result r = train(new Config(backend, devices, 20, 4096, 64 * n, 1));
        System.out.printf(java.util.Locale.ROOT, "%s, %d replicas: %d of %d parameter elements differ between sharded and unsharded; "
                + "AdamW state per replica %d floats sharded, %d unsharded%n", backend.label(), n, r.differingBits(),
                (long) n * (r.sharded().getFirst()[0].length + 1), r.optimizerState()[0], r.optimizerState()[1]);
        if (r.differingBits() != 0) {
            System.exit(1);
        }
    }

    /** One AdamW step on {@code p} (decoupled weight decay); {@code hyper} = {1 - beta1^t, 1 - beta2^t}. */
    public static void adamW(FloatArray p, FloatArray g, FloatArray m, FloatArray v, FloatArray hyper, float lr, float decay) {
        for (@Parallel int i = 0; i < p.getSize(); i++) {
            float mi = 0.9f * m.get(i) + 0.1f * g.get(i);
            float vi = 0.999f * v.get(i) + 0.001f * g.get(i) * g.get(i);
            m.set(i, mi);
            v.set(i, vi);
            p.set(i, p.get(i) - lr * ((mi / hyper.get(0)) / ((float) Math.sqrt(vi / hyper.get(1)) + 1e-8f) + decay * p.get(i)));
        }
    }

    public static Result train(Config config) {
        Run shardedRun = run(config, true);
        Run unshardedRun = run(config, false);
        List<float[][]> sharded = shardedRun.parameters();
        List<float[][]> unsharded = unshardedRun.parameters();
        long differing = 0;
        for (int r = 0; r < sharded.size(); r++) {
            for (int k = 0; k < 2; k++) {
                for (int i = 0; i < sharded.get(r)[k].length; i++) {
                    if (Float.floatToRawIntBits(sharded.get(r)[k][i]) != Float.floatToRawIntBits(unsharded.get(r)[k][i])) {
                        differing++;
                    }
                }
            }
        }
        return new Result(sharded, unsharded, differing, new long[] {shardedRun.stateFloats(), unshardedRun.stateFloats()});
    }

    /** What one run leaves: every replica's parameters, and the AdamW state floats replica 0 held. */
    private record Run(List<float[][]> parameters, long stateFloats) {
    }

    private static GradientBuckets buckets(Config config, GradientSynchronizer sync, boolean sharded) {
        // small buckets, so that w and b lie in buckets of their own, each sharded on its own
        GradientBuckets.Builder b = GradientBuckets.builder(config.devices()).bucketBytes(4 << 10)
                .add("w", config.features(), DType.FP32).add("b", 1, DType.FP32);
        return (sharded ? b.sharded(sync) : b).build();
    }

    private static Run run(Config config, boolean sharded) {
        List<? extends Device> devices = config.devices();
        int n = devices.size();
        Data data = Data.generate(config.features(), config.batch(), config.seed());
        List<Optimizer> optimizers = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(config.backend(), devices);
             GradientBuckets grads = buckets(config, sync, sharded);
             GradientBuckets params = grads.sameLayout();
             BucketSync step = new BucketSync(grads, sync, BucketSync.Options.averageOnly())) {
            for (int r = 0; r < n; r++) { // every replica draws weights of its own, as every rank of a framework would
                write(params.gradient(r, "w"), initialWeights(config.features(), config.seed() + r));
            }
            sync.broadcast(params.parameterReplicas(), 0); // ... and starts from replica 0's
            for (int r = 0; r < n; r++) {
                for (GradientBuckets.Bucket b : grads.buckets()) {
                    Gradient p = sharded ? params.shard(r, b.index()) : params.bucketGradient(r, b.index());
                    Gradient g = sharded ? grads.shard(r, b.index()) : grads.bucketGradient(r, b.index());
                    optimizers.add(new Optimizer(devices.get(r), p, g));
                }
            }
            for (int t = 1; t <= config.steps(); t++) {
                for (int r = 0; r < n; r++) {
                    float[] w = read(params.gradient(r, "w"));
                    float b = read(params.gradient(r, "b"))[0];
                    float[][] gradient = data.gradient(w, b, r * (config.batch() / n), config.batch() / n);
                    write(grads.gradient(r, "w"), gradient[0]);
                    write(grads.gradient(r, "b"), gradient[1]);
                }
                step.markReady("b"); // backward order
                step.markReady("w");
                step.finish(); // sharded: each replica's shards hold the average; else every bucket does
                for (Optimizer o : optimizers) {
                    o.step(t);
                }
                if (sharded) {
                    step.allGather(params);
                }
            }
            List<float[][]> out = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                out.add(new float[][] {read(params.gradient(r, "w")), read(params.gradient(r, "b"))});
            }
            long state = 0;
            for (int k = 0; k < grads.buckets().size(); k++) {
                state += 2 * optimizers.get(k).count; // replica 0's optimizers come first
            }
            return new Run(out, state);
        } finally {
            optimizers.forEach(Optimizer::close);
        }
    }

    /** AdamW on one replica's share of one bucket: its state exists for that share only. */
    private static final class Optimizer implements AutoCloseable {
        private final DeviceBuffer state;
        private final FloatArray hyper = new FloatArray(2);
        private final ExecutionPlan plan;
        final int count;

        Optimizer(Device device, Gradient p, Gradient g) {
            count = Math.toIntExact(p.count());
            state = device.allocate(Math.max(8, 8L * count)); // m, then v
            try (DeviceStream s = device.createStream()) {
                s.fill32(state, 0, state.byteSize(), 0);
                s.synchronize();
            }
            FloatArray pa = new FloatArray(count), ga = new FloatArray(count), m = new FloatArray(count), v = new FloatArray(count);
            TaskGraph graph = new TaskGraph("adamW").transferToDevice(DataTransferMode.EVERY_EXECUTION, hyper)
                    .task("adamW", ShardedTraining::adamW, pa, ga, m, v, hyper, LR, DECAY);
            plan = new ExecutionPlan(graph.snapshot()).withDevice(device)
                    .bind(pa, device, new DeviceSlice(p.buffer(), p.byteOffset(), count))
                    .bind(ga, device, new DeviceSlice(g.buffer(), g.byteOffset(), count))
                    .bind(m, device, new DeviceSlice(state, 0, count))
                    .bind(v, device, new DeviceSlice(state, 4L * count, count));
        }

        void step(int t) {
            hyper.set(0, 1f - (float) StrictMath.pow(0.9, t));
            hyper.set(1, 1f - (float) StrictMath.pow(0.999, t));
            plan.execute();
        }

        @Override
        public void close() {
            plan.close();
            hyper.close();
            state.close();
        }
    }

    /** A seeded regression problem: {@code y = x . w* + 0.5 + noise}. */
    private record Data(float[][] x, float[] y) {
        static Data generate(int features, int batch, long seed) {
            SplittableRandom random = new SplittableRandom(seed ^ 0x5DEECE66DL);
            float[] truth = new float[features];
            for (int f = 0; f < features; f++) {
                truth[f] = (float) random.nextGaussian();
            }
            float[][] x = new float[batch][features];
            float[] y = new float[batch];
            for (int i = 0; i < batch; i++) {
                double dot = 0.5;
                for (int f = 0; f < features; f++) {
                    x[i][f] = (float) random.nextGaussian();
                    dot += x[i][f] * truth[f];
                }
                y[i] = (float) (dot + 0.01 * random.nextGaussian());
            }
            return new Data(x, y);
        }

        /** The mean-squared-error gradient over samples {@code [first, first + count)}: {w, b}. */
        float[][] gradient(float[] w, float b, int first, int count) {
            float[] gw = new float[w.length];
            double gb = 0;
            for (int i = first; i < first + count; i++) {
                double err = b - y[i];
                for (int f = 0; f < w.length; f++) {
                    err += x[i][f] * w[f];
                }
                for (int f = 0; f < w.length; f++) {
                    gw[f] += (float) (2 * err * x[i][f] / count);
                }
                gb += 2 * err / count;
            }
            return new float[][] {gw, {(float) gb}};
        }
    }

    private static float[] initialWeights(int features, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] w = new float[features];
        for (int f = 0; f < features; f++) {
            w[f] = (float) (random.nextGaussian() * 0.1);
        }
        return w;
    }

    private static float[] read(Gradient g) {
        Device d = g.buffer().device();
        float[] out = new float[Math.toIntExact(g.count())];
        try (HostBuffer h = d.allocateHost(Math.max(4, g.byteSize())); DeviceStream s = d.createStream()) {
            s.copyToHost(g.buffer(), g.byteOffset(), h, 0, g.byteSize());
            s.synchronize();
            for (int i = 0; i < out.length; i++) {
                out[i] = h.segment().getAtIndex(ValueLayout.JAVA_FLOAT, i);
            }
        }
        return out;
    }

    private static void write(Gradient g, float[] values) {
        Device d = g.buffer().device();
        try (HostBuffer h = d.allocateHost(Math.max(4, g.byteSize())); DeviceStream s = d.createStream()) {
            for (int i = 0; i < values.length; i++) {
                h.segment().setAtIndex(ValueLayout.JAVA_FLOAT, i, values[i]);
            }
            s.copyFromHost(h, 0, g.buffer(), g.byteOffset(), g.byteSize());
            s.synchronize();
        }
    }
}
