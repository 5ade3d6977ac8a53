package io.gradsync.examples.libtorch;

import static org.bytedeco.pytorch.global.torch.from_blob;
import static org.bytedeco.pytorch.global.torch.manual_seed;
import static org.bytedeco.pytorch.global.torch.mse_loss;
import static org.bytedeco.pytorch.global.torch.tanh;

import io.gradsync.sync.DType;
import io.gradsync.sync.ForeignTensor;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.bucket.BucketSync;
import io.gradsync.sync.bucket.GradientBuckets;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.pytorch.LinearImpl;
import org.bytedeco.pytorch.SGD;
import org.bytedeco.pytorch.SGDOptions;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch.ScalarType;

/**
 * A libtorch model trained data-parallel in one JVM, each replica on a JVM device of its own, its
 * gradients averaged by gradsync: the pattern for a real framework's autograd, written against the
 * exported API only.
 *
 * <ul>
 * <li><b>Start-up:</b> every replica draws its own weights ({@code manual_seed(seed + r)}), as
 * every rank of a framework does; their tensors, wrapped in place ({@link ForeignTensor}), are
 * broadcast from replica 0.</li>
 * <li><b>Gradients as bucket views</b> (PyTorch DDP's {@code gradient_as_bucket_view}): each
 * parameter's {@code grad} is set once to a {@code from_blob} tensor over its slice of gradsync's
 * buckets, so backward accumulates straight into them and nothing is wrapped per step or can move;
 * the grads are zeroed in place ({@link GradientBuckets#zero()}), never set to none, which would
 * drop the views.</li>
 * <li><b>Per step:</b> each replica runs forward and backward on its shard of the batch, the buckets
 * are averaged ({@link BucketSync#synchronize()}), and libtorch's own SGD steps each replica.</li>
 * </ul>
 * One replica trained on the whole batch beside them is the reference.
 */
public final class LibtorchTraining {
    static final int IN = 16;
    static final int HIDDEN = 32;
    static final double LR = 0.05;
    /** Parameter names, in the order the model registers them. */
    static final List<String> NAMES = List.of("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias");

    /**
     * @param batch samples per step, split evenly over the replicas
     */
    public record Config(SyncBackend backend, int replicas, int steps, int batch, long seed) {
        public Config {
            if (replicas < 1 || batch % replicas != 0) {
                throw new IllegalArgumentException("batch " + batch + " does not split evenly over " + replicas + " replicas");
            }
        }
    }

    /**
     * @param parameters        per replica, every parameter's values after training, flattened in {@link #NAMES} order
     * @param replicasIdentical every replica's parameters have the same bits
     * @param maxDifference     the largest difference from one replica trained on the whole batch
     * @param syncMicros        the median time of one step's {@code BucketSync.synchronize()}
     */
    public record Result(List<float[]> parameters, boolean replicasIdentical, double maxDifference, double initialLoss,
            double finalLoss, double syncMicros) {
    }

    private LibtorchTraining() {
    }

    /**
     * After {@code ./mvnw -B -q package -DskipTests} (which puts this module's jar in
     * {@code examples-libtorch/target} and what it needs in {@code target/lib}):
     * {@code scripts/gradsync run -cp 'examples-libtorch/target/*:examples-libtorch/target/lib/*'
     * io.gradsync.examples.libtorch.LibtorchTraining [REPLICAS [STEPS]]}
     */
    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int steps = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        Result r = train(new Config(SyncBackend.CPU, n, steps, 64 * n, 1));
        System.out.printf(java.util.Locale.ROOT, "libtorch MLP %d-%d-1, %d replicas, %d steps: loss %.5f -> %.5f; replicas identical: %s; "
                + "largest difference from one replica on the whole batch %.3g; sync %.1f us per step%n", IN, HIDDEN, n, steps, r.initialLoss(),
                r.finalLoss(), r.replicasIdentical(), r.maxDifference(), r.syncMicros());
    }

    /** One replica's libtorch model: two linear layers and its own SGD. */
    static final class Model {
        final LinearImpl fc1;
        final LinearImpl fc2;
        final List<Tensor> parameters;
        final SGD optimizer;

        Model(long seed) {
            manual_seed(seed);
            fc1 = new LinearImpl(IN, HIDDEN);
            fc2 = new LinearImpl(HIDDEN, 1);
            parameters = List.of(fc1.weight(), fc1.bias(), fc2.weight(), fc2.bias());
            optimizer = new SGD(new TensorVector(parameters.toArray(Tensor[]::new)), new SGDOptions(LR));
        }

        Tensor loss(Tensor x, Tensor y) {
            return mse_loss(fc2.forward(tanh(fc1.forward(x))), y);
        }

        /** The parameters as tensors libtorch allocated, wrapped in place for gradsync (they stay where they are). */
        Replica weightsOn(Device device) {
            List<ForeignTensor> tensors = new ArrayList<>();
            for (int i = 0; i < parameters.size(); i++) {
                Tensor p = parameters.get(i);
                tensors.add(ForeignTensor.fixed(NAMES.get(i), p.data_ptr().address(), p.numel(), DType.FP32));
            }
            return Replica.on(device).wrap(tensors).build();
        }

        float[] flatParameters() {
            int total = parameters.stream().mapToInt(p -> (int) p.numel()).sum();
            float[] out = new float[total];
            int at = 0;
            for (Tensor p : parameters) {
                FloatPointer f = new FloatPointer(p.contiguous().data_ptr());
                int n = (int) p.numel();
                f.capacity(n).get(out, at, n);
                at += n;
            }
            return out;
        }
    }

    public static Result train(Config c) {
        int n = c.replicas();
        List<JvmDevice> devices = JvmRuntime.createDevices(n);
        List<Model> models = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            models.add(new Model(c.seed() + r)); // each replica draws weights of its own
        }
        Model one = new Model(c.seed()); // the reference: replica 0's weights, the whole batch
        Tensor[] data = data(c.batch(), c.seed());
        GradientBuckets.Builder layout = GradientBuckets.builder(devices).bucketBytes(2048); // several buckets for this small model
        for (int i = 0; i < NAMES.size(); i++) {
            layout.add(NAMES.get(i), models.getFirst().parameters.get(i).numel(), DType.FP32);
        }
        try (GradientSynchronizer sync = Synchronizers.create(c.backend(), devices);
             GradientBuckets buckets = layout.build();
             BucketSync step = new BucketSync(buckets, sync, BucketSync.Options.averageOnly())) {
            List<Replica> weights = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                weights.add(models.get(r).weightsOn(devices.get(r)));
            }
            sync.broadcast(weights, 0); // ... and all start from replica 0's
            for (int r = 0; r < n; r++) {
                useBucketViews(models.get(r), buckets, r);
            }
            int shard = c.batch() / n;
            double initial = Double.NaN;
            double last = Double.NaN;
            double[] syncMicros = new double[c.steps()];
            for (int s = 0; s < c.steps(); s++) {
                buckets.zero(); // zero_grad in place: the grads stay gradsync's views
                double loss = 0;
                for (int r = 0; r < n; r++) {
                    Tensor l = models.get(r).loss(data[0].narrow(0, (long) r * shard, shard), data[1].narrow(0, (long) r * shard, shard));
                    loss += l.item_float() / n;
                    l.backward();
                }
                long t0 = System.nanoTime();
                step.synchronize(); // every replica's grads now hold the average
                syncMicros[s] = (System.nanoTime() - t0) / 1e3;
                for (Model m : models) {
                    m.optimizer.step();
                }
                one.optimizer.zero_grad();
                one.loss(data[0], data[1]).backward();
                one.optimizer.step();
                initial = s == 0 ? loss : initial;
                last = loss;
            }
            List<float[]> params = models.stream().map(Model::flatParameters).toList();
            float[] reference = one.flatParameters();
            double worst = 0;
            boolean identical = true;
            for (float[] p : params) {
                identical &= Arrays.equals(p, params.getFirst());
                for (int i = 0; i < p.length; i++) {
                    worst = Math.max(worst, Math.abs(p[i] - reference[i]));
                }
            }
            Arrays.sort(syncMicros);
            return new Result(params, identical, worst, initial, last, syncMicros[syncMicros.length / 2]);
        } finally {
            for (Model m : models) { // the views point into the buckets, which are gone now
                m.parameters.forEach(p -> p.mutable_grad().put(new Tensor()));
            }
            devices.forEach(Device::close);
        }
    }

    /** Sets each of {@code model}'s grads to a tensor over replica {@code r}'s slice of the buckets. */
    static void useBucketViews(Model model, GradientBuckets buckets, int r) {
        for (int i = 0; i < NAMES.size(); i++) {
            Tensor p = model.parameters.get(i);
            Gradient g = buckets.gradient(r, NAMES.get(i));
            Tensor view = from_blob(at(g.address()), p.sizes(), new TensorOptions(ScalarType.Float));
            p.mutable_grad().put(view);
        }
    }

    /** A JavaCPP pointer at a raw address (the bucket's memory; libtorch only views it). */
    static Pointer at(long where) {
        return new Pointer() {
            {
                address = where; // Pointer's own field (a parameter named address would be shadowed by it)
            }
        };
    }

    /** A seeded regression batch: {x, y} with y = sin(x . w) + noise. */
    static Tensor[] data(int batch, long seed) {
        SplittableRandom random = new SplittableRandom(seed ^ 0x9E3779B97F4A7C15L);
        float[] w = new float[IN];
        for (int f = 0; f < IN; f++) {
            w[f] = (float) random.nextGaussian() / 4;
        }
        float[] x = new float[batch * IN];
        float[] y = new float[batch];
        for (int i = 0; i < batch; i++) {
            double dot = 0;
            for (int f = 0; f < IN; f++) {
                x[i * IN + f] = (float) random.nextGaussian();
                dot += x[i * IN + f] * w[f];
            }
            y[i] = (float) (Math.sin(dot) + 0.01 * random.nextGaussian());
        }
        TensorOptions floats = new TensorOptions(ScalarType.Float);
        return new Tensor[] {from_blob(new FloatPointer(x), new long[] {batch, IN}, floats).clone(),
            from_blob(new FloatPointer(y), new long[] {batch, 1}, floats).clone()};
    }
}
