package io.gradsync.examples;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.bucket.BucketSync;
import io.gradsync.sync.bucket.GradientBuckets;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.jvm.JvmDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A data-parallel trainer written as a user would write one, against gradsync's exported API only.
 * It owns its model (linear regression, {@code w} and {@code b}, on the host), its gradient memory
 * (JCuda {@code cuMemAlloc} on GPUs, native segments on JVM devices) and its streams; each
 * replica's "backward" computes the gradient of its shard of the batch and writes it on its own
 * stream; gradsync averages it in place, ordered on those streams; the optimizer step reads the
 * average back on the same streams. With {@code buckets}, the gradients live in gradsync's buckets
 * instead and the program writes them through the buckets' addresses.
 *
 * <pre>
 * gradsync run -cp examples/target/gradsync-examples-VERSION.jar io.gradsync.examples.OwnMemoryTraining \
 *     [--backend cpu] [--devices 2] [--runtime jvm|cuda] [--memory own|buckets] [--steps 50]
 * </pre>
 */
public final class OwnMemoryTraining {

    /** What to train with. */
    public record Config(SyncBackend backend, List<? extends Device> devices, boolean buckets, int steps,
            int features, int batch, long seed) {
    }

    /** The trained model, and the largest difference from one replica trained on the whole batch. */
    public record Result(float[] weights, float bias, double initialLoss, double loss, double maxDifferenceFromOneReplica) {
    }

    private OwnMemoryTraining() {
    }

    public static void main(String[] args) {
        String backend = "auto";
        String runtime = DeviceCatalog.preferredRuntime().label();
        int devices = 2;
        boolean buckets = false;
        int steps = 50;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--backend" -> backend = args[++i];
                case "--devices" -> devices = Integer.parseInt(args[++i]);
                case "--runtime" -> runtime = args[++i];
                case "--memory" -> buckets = switch (args[++i]) {
                    case "own" -> false;
                    case "buckets" -> true;
                    default -> throw new IllegalArgumentException("--memory is own or buckets, got " + args[i]);
                };
                case "--steps" -> steps = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("OwnMemoryTraining: unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        DeviceRuntime rt = runtimeOf(runtime);
        List<? extends Device> list = rt == DeviceRuntime.CUDA && DeviceCatalog.gpus(rt).size() < devices
                ? DeviceCatalog.sharedGpus(rt, devices) : DeviceCatalog.select(rt, devices);
        Result r = train(new Config(SyncBackend.parse(backend), list, buckets, steps, 256, 512, 42));
        System.out.printf(Locale.ROOT, "%d replicas on %s, %s memory: loss %.6f (from %.6f), bias %.5f, max |difference| from one replica %.2e%n",
                list.size(), list.stream().map(Device::id).toList(), buckets ? "bucket" : "own", r.loss(), r.initialLoss(), r.bias(),
                r.maxDifferenceFromOneReplica());
    }

    private static DeviceRuntime runtimeOf(String label) {
        for (DeviceRuntime r : DeviceRuntime.values()) {
            if (r.label().equals(label)) {
                return r;
            }
        }
        throw new IllegalArgumentException("--runtime is jvm or cuda, got " + label);
    }

    /** Trains on {@code config.devices()} and, as the reference, on one replica with the whole batch. */
    public static Result train(Config c) {
        Data data = new Data(c.features(), c.batch(), c.seed());
        Model parallel = trainParallel(c, data);
        Model one = new Model(c.features());
        for (int s = 0; s < c.steps(); s++) {
            double[] g = data.gradient(one, 0, c.batch());
            one.step(toFloat(g, 0, c.features()), (float) g[c.features()]);
        }
        double diff = Math.abs(parallel.b - one.b);
        for (int i = 0; i < c.features(); i++) {
            diff = Math.max(diff, Math.abs(parallel.w[i] - one.w[i]));
        }
        return new Result(parallel.w, parallel.b, data.loss(new Model(c.features())), data.loss(parallel), diff);
    }

    private static Model trainParallel(Config c, Data data) {
        int n = c.devices().size();
        if (c.batch() % n != 0) {
            throw new IllegalArgumentException("batch " + c.batch() + " does not split into " + n + " equal shards");
        }
        int shard = c.batch() / n;
        List<Model> models = new ArrayList<>();
        List<UserMemory> memory = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(c.backend(), c.devices(),
                SyncOptions.defaults().withWaitForCaller(false))) { // every replica names its stream
            GradientBuckets buckets = c.buckets() ? GradientBuckets.builder(c.devices())
                    .add("w", c.features(), DType.FP32).add("b", 1, DType.FP32).build() : null;
            List<Gradient[]> grads = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                Device d = c.devices().get(r);
                UserMemory m = d instanceof CudaDevice gpu ? new CudaUserMemory(gpu) : new JvmUserMemory((JvmDevice) d);
                memory.add(m);
                models.add(new Model(c.features()));
                grads.add(buckets != null
                        ? new Gradient[] {buckets.gradient(r, "w"), buckets.gradient(r, "b")}
                        : new Gradient[] {m.allocate("w", c.features()), m.allocate("b", 1)});
            }
            BucketSync bucketSync = buckets == null ? null : new BucketSync(buckets, sync, BucketSync.Options.averageOnly());
            try {
                if (bucketSync != null) {
                    bucketSync.useStreams(memory.stream().map(UserMemory::stream).toList());
                }
                float[] w = new float[c.features()];
                float[] b = new float[1];
                for (int step = 0; step < c.steps(); step++) {
                    List<Replica> replicas = new ArrayList<>();
                    for (int r = 0; r < n; r++) { // "backward" of each replica's shard, written on its own stream
                        double[] g = data.gradient(models.get(r), r * shard, shard);
                        memory.get(r).write(grads.get(r)[0], toFloat(g, 0, c.features()));
                        memory.get(r).write(grads.get(r)[1], new float[] {(float) g[c.features()]});
                        replicas.add(Replica.on(c.devices().get(r)).add(grads.get(r)[0]).add(grads.get(r)[1])
                                .stream(memory.get(r).stream()).build());
                    }
                    if (bucketSync != null) {
                        bucketSync.markReady("b");
                        bucketSync.markReady("w");
                        bucketSync.finish();
                    } else {
                        SyncHandle h = sync.synchronizeAsync(replicas); // returns once queued
                        // nothing to await: the reads below are queued on the same streams, after the average
                        assert h != null;
                    }
                    for (int r = 0; r < n; r++) { // the optimizer step, on what each replica's stream now holds
                        memory.get(r).read(grads.get(r)[0], w);
                        memory.get(r).read(grads.get(r)[1], b);
                        models.get(r).step(w, b[0]);
                    }
                }
            } finally {
                if (bucketSync != null) {
                    bucketSync.close();
                }
                if (buckets != null) {
                    buckets.close();
                }
            }
        } finally {
            memory.forEach(UserMemory::close);
        }
        for (int r = 1; r < n; r++) {
            if (!java.util.Arrays.equals(models.get(r).w, models.getFirst().w) || models.get(r).b != models.getFirst().b) {
                throw new IllegalStateException("replica " + r + " drifted from replica 0: they got different averages");
            }
        }
        return models.getFirst();
    }

    private static float[] toFloat(double[] g, int from, int count) {
        float[] f = new float[count];
        for (int i = 0; i < count; i++) {
            f[i] = (float) g[from + i];
        }
        return f;
    }

    /** Linear regression: y = x . w + b, mean squared error, plain SGD. */
    private static final class Model {
        static final float LEARNING_RATE = 0.5f;
        final float[] w;
        float b;

        Model(int features) {
            w = new float[features];
        }

        void step(float[] gw, float gb) {
            for (int i = 0; i < w.length; i++) {
                w[i] -= LEARNING_RATE * gw[i];
            }
            b -= LEARNING_RATE * gb;
        }
    }

    /** A seeded batch whose targets come from a hidden linear model plus noise. */
    private static final class Data {
        final int features;
        final float[][] x;
        final float[] y;

        Data(int features, int batch, long seed) {
            this.features = features;
            SplittableRandom random = new SplittableRandom(seed);
            float[] truth = new float[features];
            for (int i = 0; i < features; i++) {
                truth[i] = (float) random.nextGaussian();
            }
            x = new float[batch][features];
            y = new float[batch];
            for (int s = 0; s < batch; s++) {
                double t = 0.5;
                for (int i = 0; i < features; i++) {
                    x[s][i] = (float) (random.nextGaussian() / Math.sqrt(features));
                    t += x[s][i] * truth[i];
                }
                y[s] = (float) (t + 0.01 * random.nextGaussian());
            }
        }

        /** d(mean over the shard of (pred - y)^2) / d(w, b), in float64: w first, then b. */
        double[] gradient(Model m, int first, int count) {
            double[] g = new double[features + 1];
            for (int s = first; s < first + count; s++) {
                double err = m.b - y[s];
                for (int i = 0; i < features; i++) {
                    err += x[s][i] * m.w[i];
                }
                double scale = 2 * err / count;
                for (int i = 0; i < features; i++) {
                    g[i] += scale * x[s][i];
                }
                g[features] += scale;
            }
            return g;
        }

        double loss(Model m) {
            double sum = 0;
            for (int s = 0; s < y.length; s++) {
                double err = m.b - y[s];
                for (int i = 0; i < features; i++) {
                    err += x[s][i] * m.w[i];
                }
                sum += err * err;
            }
            return sum / y.length;
        }
    }
}
