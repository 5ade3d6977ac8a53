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
import io.gradsync.tasks.device.RuntimeStatus;
import io.gradsync.tasks.jvm.JvmDevice;
import java.io.PrintStream;
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
 * <p>The batch need not split evenly: shards differ by at most one sample, and each replica's
 * gradient is weighted by its shard's share of the batch, so that the average is still the
 * gradient of the whole batch and N replicas follow one replica trained on it.
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

    /** The batch and model size the command line trains with. */
    static final int BATCH = 512;
    static final int FEATURES = 256;

    private static final String USAGE = """
            usage: OwnMemoryTraining [--backend NAME] [--devices N] [--runtime jvm|cuda] [--memory own|buckets] [--steps N]
            Linear regression on a seeded batch of %d samples, data-parallel over N replicas that own their
            gradient memory and streams; checks that they follow one replica trained on the whole batch.
              --backend NAME   auto (default), cpu, ptx, nccl or single (one device). Not opencl: this
                               program's memory is CUDA's (cuMemAlloc) or the JVM's, which OpenCL devices cannot take
              --devices N      replicas, 1..%d (default 2). The batch is split into N shards of sizes that differ
                               by at most one; each replica's gradient is weighted by its shard's share of the batch,
                               so the average is the whole batch's gradient
              --runtime NAME   jvm or cuda (default: cuda where present, else jvm); on cuda, more replicas than
                               GPUs share them (logical devices)
              --memory KIND    own (the program's memory, wrapped; default) or buckets (gradsync's buckets)
              --steps N        optimizer steps, at least 1 (default 50)
              -h, --help       this text
            """.formatted(BATCH, BATCH);

    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        if (code != 0) {
            System.exit(code);
        }
    }

    /** The command line: 0 done, 2 bad usage (one line on {@code err}); other failures throw. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("OwnMemoryTraining: " + e.getMessage() + " (see --help)");
            return 2;
        }
        if (o == null) {
            out.print(USAGE);
            return 0;
        }
        List<? extends Device> list;
        try {
            list = o.runtime() == DeviceRuntime.CUDA && DeviceCatalog.gpus(o.runtime()).size() < o.devices()
                    ? DeviceCatalog.sharedGpus(o.runtime(), o.devices()) : DeviceCatalog.select(o.runtime(), o.devices());
        } catch (IllegalArgumentException | IllegalStateException e) {
            err.println("OwnMemoryTraining: --runtime " + o.runtime().label() + " --devices " + o.devices() + ": " + e.getMessage());
            return 2;
        }
        Result r;
        try {
            r = train(new Config(o.backend(), list, o.buckets(), o.steps(), FEATURES, BATCH, 42));
        } catch (BackendUnusable e) { // e.g. ptx or nccl on JVM devices: the choice of options, said in one line
            err.println("OwnMemoryTraining: --backend " + o.backend().label() + " on " + list.getFirst().runtime().label()
                    + " devices: " + e.getCause().getMessage());
            return 2;
        } finally {
            if (o.runtime() == DeviceRuntime.JVM) {
                list.forEach(Device::close); // JVM devices are the caller's
            }
        }
        out.printf(Locale.ROOT, "%d replicas on %s, %s memory: loss %.6f (from %.6f), bias %.5f, max |difference| from one replica %.2e%n",
                list.size(), list.stream().map(Device::id).toList(), o.buckets() ? "bucket" : "own", r.loss(), r.initialLoss(), r.bias(),
                r.maxDifferenceFromOneReplica());
        return 0;
    }

    /** The parsed command line. */
    private record Options(SyncBackend backend, int devices, DeviceRuntime runtime, boolean buckets, int steps) {

        /** Null for --help; bad usage is an IllegalArgumentException naming the option. */
        static Options parse(String[] args) {
            SyncBackend backend = SyncBackend.AUTO;
            DeviceRuntime runtime = null; // the preferred one, looked up only when needed
            int devices = 2;
            boolean buckets = false;
            int steps = 50;
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (arg.equals("-h") || arg.equals("--help")) {
                    return null;
                }
                int eq = arg.indexOf('=');
                String name = arg.startsWith("--") && eq > 0 ? arg.substring(0, eq) : arg;
                if (!List.of("--backend", "--devices", "--runtime", "--memory", "--steps").contains(name)) {
                    throw new IllegalArgumentException("unknown option '" + arg + "'");
                }
                String value;
                if (eq > 0 && name.length() < arg.length()) {
                    value = arg.substring(eq + 1);
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException(name + " needs a value");
                }
                switch (name) {
                    case "--backend" -> backend = backendOf(value);
                    case "--devices" -> devices = count(name, value, BATCH);
                    case "--runtime" -> runtime = runtimeOf(value);
                    case "--memory" -> buckets = switch (value) {
                        case "own" -> false;
                        case "buckets" -> true;
                        default -> throw new IllegalArgumentException("--memory is own or buckets, got '" + value + "'");
                    };
                    default -> steps = count(name, value, Integer.MAX_VALUE);
                }
            }
            runtime = runtime != null ? runtime : DeviceCatalog.preferredRuntime();
            if (backend == SyncBackend.SINGLE && devices != 1) {
                throw new IllegalArgumentException("--backend single takes exactly one device, got --devices " + devices);
            }
            RuntimeStatus status = DeviceCatalog.status(runtime);
            if (!status.available()) {
                throw new IllegalArgumentException("--runtime " + runtime.label() + ": unavailable here: " + status.detail());
            }
            return new Options(backend, devices, runtime, buckets, steps);
        }

        private static SyncBackend backendOf(String value) {
            SyncBackend b;
            try {
                b = SyncBackend.parse(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--backend: " + e.getMessage());
            }
            if (b == SyncBackend.OPENCL) {
                throw new IllegalArgumentException("--backend opencl is not supported here: this program's gradient memory is "
                        + "CUDA's (cuMemAlloc) or the JVM's, which OpenCL devices cannot take; use cpu, ptx, nccl, single or auto");
            }
            return b;
        }

        /** A whole number in 1..max. */
        private static int count(String option, String value, int max) {
            int n;
            try {
                n = Integer.parseInt(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + ": '" + value + "' is not a whole number");
            }
            if (n < 1 || n > max) {
                throw new IllegalArgumentException(option + (max == Integer.MAX_VALUE ? " must be at least 1"
                        : " must be 1.." + max + " (each replica needs a sample of the batch of " + BATCH + ")") + ", got " + n);
            }
            return n;
        }

        private static DeviceRuntime runtimeOf(String label) {
            return switch (label) {
                case "jvm" -> DeviceRuntime.JVM;
                case "cuda" -> DeviceRuntime.CUDA;
                case "opencl" -> throw new IllegalArgumentException("--runtime opencl is not supported here: this program's "
                        + "gradient memory is CUDA's or the JVM's; use jvm or cuda");
                default -> throw new IllegalArgumentException("--runtime is jvm or cuda, got '" + label + "'");
            };
        }
    }

    /** The backend cannot serve the devices given ({@link Synchronizers#create} refused them); the cause says why. */
    private static final class BackendUnusable extends IllegalArgumentException {
        BackendUnusable(RuntimeException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** Trains on {@code config.devices()} and, as the reference, on one replica with the whole batch. */
    public static Result train(Config c) {
        Data data = new Data(c.features(), c.batch(), c.seed());
        Model parallel = trainParallel(c, data);
        Model one = new Model(c.features());
        for (int s = 0; s < c.steps(); s++) {
            double[] g = data.gradient(one, 0, c.batch(), c.batch());
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
        if (c.batch() < n) {
            throw new IllegalArgumentException("batch " + c.batch() + " has fewer samples than the " + n + " replicas");
        }
        // shards as even as can be: the first batch % n replicas take one sample more
        int[] first = new int[n];
        int[] count = new int[n];
        for (int r = 0; r < n; r++) {
            count[r] = c.batch() / n + (r < c.batch() % n ? 1 : 0);
            first[r] = r == 0 ? 0 : first[r - 1] + count[r - 1];
        }
        // Each replica's gradient is its shard's sum over batch / n (not over its own count): the
        // average over n replicas is then the sum over the whole batch divided by the batch, the
        // whole batch's gradient, however unevenly it split.
        double divisor = (double) c.batch() / n;
        List<Model> models = new ArrayList<>();
        List<UserMemory> memory = new ArrayList<>();
        GradientSynchronizer created;
        try {
            created = Synchronizers.create(c.backend(), c.devices(), SyncOptions.defaults().withWaitForCaller(false));
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            throw new BackendUnusable(e);
        }
        try (GradientSynchronizer sync = created) { // every replica names its stream
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
                        double[] g = data.gradient(models.get(r), first[r], count[r], divisor);
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

        /**
         * d(sum over the shard of (pred - y)^2) / d(w, b) divided by {@code divisor}, in float64: w
         * first, then b. With {@code divisor == count}, the gradient of the shard's mean.
         */
        double[] gradient(Model m, int first, int count, double divisor) {
            double[] g = new double[features + 1];
            for (int s = first; s < first + count; s++) {
                double err = m.b - y[s];
                for (int i = 0; i < features; i++) {
                    err += x[s][i] * m.w[i];
                }
                double scale = 2 * err / divisor;
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
