package io.gradsync.train;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.bucket.BucketSync;
import io.gradsync.sync.bucket.GradientBuckets;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.ConversionKernels;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.ExecutionPlan;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Data-parallel training of an MLP classifier: one replica per device, each on its shard of every
 * global batch, gradients averaged through {@link GradientBuckets} and {@link BucketSync} while
 * backward runs, then the same optimizer step on every replica.
 *
 * <p>Per replica, everything lives in device memory the trainer owns and binds into the task
 * graphs ({@link ExecutionPlan#bind}): weights and activations are shared by the forward, backward
 * and update plans, and backward writes each gradient straight into its view of the bucket that
 * the synchronizer averages (for 16-bit gradients: an fp32 gradient converted into the 16-bit view,
 * and back to fp32 for the update; weights and optimizer state stay fp32). Backward runs one graph
 * per layer, last layer first, marking that layer's parameters ready after it, so a full bucket is
 * averaged while earlier layers are still being differentiated.
 *
 * <p>Each replica's gradient is the mean over its own shard, so the average over N replicas of
 * equal shards is the mean over the whole batch: N replicas follow one replica on the whole batch.
 */
public final class DataParallelTrainer implements AutoCloseable {

    public enum Optimizer { SGD, ADAM }

    /**
     * @param layers      widths from input features to classes, e.g. {@code [32, 128, 128, 10]}
     * @param globalBatch samples per step over all replicas; a multiple of the replica count
     * @param gradType    dtype of the gradients in the buckets (what the collectives move)
     * @param maxNorm     clip gradients to this global norm; 0 for none
     */
    public record Config(List<Integer> layers, int globalBatch, DType gradType, Optimizer optimizer, float learningRate,
            long bucketBytes, double maxNorm, long seed) {
        public Config {
            if (layers == null || layers.stream().anyMatch(Objects::isNull)) { // not contains(null): List.of throws there
                throw new IllegalArgumentException("layers: need the widths, none null, got " + layers);
            }
            layers = List.copyOf(layers);
            if (layers.size() < 2 || layers.stream().anyMatch(w -> w < 1)) {
                throw new IllegalArgumentException("layers: need at least input and output widths, all >= 1, got " + layers);
            }
            for (int l = 0; l + 1 < layers.size(); l++) {
                if ((long) layers.get(l) * layers.get(l + 1) > Integer.MAX_VALUE) { // one layer's weights are one array
                    throw new IllegalArgumentException("layers: " + layers.get(l) + " x " + layers.get(l + 1)
                            + " weights are more than an array holds (2^31 - 1 elements)");
                }
            }
            if (layers.getLast() < 2) {
                throw new IllegalArgumentException("a classifier needs at least 2 classes, got " + layers.getLast());
            }
            Objects.requireNonNull(gradType, "gradType");
            Objects.requireNonNull(optimizer, "optimizer");
            if (globalBatch < 1) {
                throw new IllegalArgumentException("batch must be >= 1, got " + globalBatch);
            }
            int widest = layers.stream().mapToInt(Integer::intValue).max().orElseThrow();
            if ((long) globalBatch * widest > Integer.MAX_VALUE) { // a layer's activations over the batch are one array
                throw new IllegalArgumentException("batch " + globalBatch + " x width " + widest
                        + " activations are more than an array holds (2^31 - 1 elements)");
            }
            if (!(learningRate > 0) || Float.isInfinite(learningRate)) {
                throw new IllegalArgumentException("learning rate must be a finite number > 0, got " + learningRate);
            }
            if (!(maxNorm >= 0) || Double.isInfinite(maxNorm)) {
                throw new IllegalArgumentException("maxNorm must be finite and >= 0 (0: no clipping), got " + maxNorm);
            }
        }

        public int layerCount() {
            return layers.size() - 1;
        }
    }

    /**
     * @param loss           mean cross-entropy over this process's shards (the global batch in one process)
     * @param applied        false when the averaged gradients were not finite and the update was skipped
     * @param gradNorm       global gradient norm before clipping (NaN when neither clipping nor asked)
     * @param syncNanos      from the first bucket's all-reduce to the last one's end
     * @param exposedSyncNanos time the step waited for the sync after backward (not hidden by overlap)
     */
    public record StepStats(double loss, boolean applied, double gradNorm, long stepNanos, long syncNanos,
            long exposedSyncNanos) {
    }

    private static final float BETA1 = 0.9f;
    private static final float BETA2 = 0.999f;
    private static final float EPS = 1e-8f;

    private final Config config;
    private final List<? extends Device> devices;
    private final GradientBuckets buckets;
    private final BucketSync sync;
    private final List<ReplicaState> replicas = new ArrayList<>();
    private final ExecutorService workers;
    private final int worldSize;   // replicas over all processes: the batch splits into this many shards
    private final int firstShard;  // this process's first replica's shard (its global rank)
    private int step;

    /**
     * @param synchronizer built for {@code devices}, in the same order; not closed by the trainer
     */
    public DataParallelTrainer(List<? extends Device> devices, GradientSynchronizer synchronizer, Config config) {
        this.config = Objects.requireNonNull(config, "config");
        this.devices = List.copyOf(devices);
        // one process drives all replicas, or (nccl under a launcher) each process one of WORLD_SIZE
        this.worldSize = synchronizer.worldSize();
        this.firstShard = synchronizer.rank();
        if (firstShard + devices.size() > worldSize) {
            throw new IllegalArgumentException("synchronizer averages " + worldSize + " replicas from rank " + firstShard
                    + ", but " + devices.size() + " devices were given");
        }
        if (config.globalBatch() % worldSize != 0) {
            throw new IllegalArgumentException("batch " + config.globalBatch() + " does not split evenly over "
                    + worldSize + " replicas");
        }
        GradientBuckets.Builder b = GradientBuckets.builder(devices).bucketBytes(config.bucketBytes());
        for (int l = 0; l < config.layerCount(); l++) {
            b.add(weightName(l), (long) config.layers().get(l + 1) * config.layers().get(l), config.gradType());
            b.add(biasName(l), config.layers().get(l + 1), config.gradType());
        }
        this.buckets = b.build();
        BucketSync.Options options = config.maxNorm() > 0 ? BucketSync.Options.averageOnly().withClipping(config.maxNorm())
                : BucketSync.Options.averageOnly().withNorm(); // the finite check decides whether to step
        this.sync = new BucketSync(buckets, synchronizer, options);
        this.workers = Executors.newFixedThreadPool(devices.size(), r -> {
            Thread t = new Thread(r, "gradsync-replica");
            t.setDaemon(true);
            return t;
        });
        try {
            for (int r = 0; r < devices.size(); r++) {
                replicas.add(new ReplicaState(r, devices.get(r), initialWeights(config, firstShard + r)));
            }
            // Each replica drew its own weights, as a framework does on each rank: one broadcast makes them replica 0's.
            synchronizer.broadcast(replicas.stream().map(ReplicaState::parameters).toList(), 0);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    public static String weightName(int layer) {
        return "fc" + layer + ".weight";
    }

    public static String biasName(int layer) {
        return "fc" + layer + ".bias";
    }

    public Config config() {
        return config;
    }

    public GradientBuckets buckets() {
        return buckets;
    }

    /** Parameters in registration order: {@code fc0.weight, fc0.bias, fc1.weight, ...}. */
    public List<String> parameters() {
        return buckets.parameters();
    }

    /**
     * He-initialized weights, zero biases, from the config's seed plus the replica's global index:
     * different on every replica until the start-up broadcast (replica 0's are the config's seed's).
     */
    static float[][] initialWeights(Config config, int globalReplica) {
        SplittableRandom random = new SplittableRandom(config.seed() + globalReplica);
        float[][] out = new float[2 * config.layerCount()][];
        for (int l = 0; l < config.layerCount(); l++) {
            int in = config.layers().get(l);
            int outDim = config.layers().get(l + 1);
            float[] w = new float[in * outDim];
            double std = Math.sqrt(2.0 / in);
            for (int i = 0; i < w.length; i++) {
                w[i] = (float) ((random.nextDouble() * 2 - 1) * std * Math.sqrt(3)); // uniform with that std
            }
            out[2 * l] = w;
            out[2 * l + 1] = new float[outDim];
        }
        return out;
    }

    /** One optimizer step on global batch {@code step} of {@code data}. */
    public StepStats step(SyntheticData data) {
        if (workers.isShutdown()) {
            throw new IllegalStateException("the trainer is closed");
        }
        if (data.features() != config.layers().getFirst() || data.classes() != config.layers().getLast()) {
            throw new IllegalArgumentException("data has " + data.features() + " features and " + data.classes()
                    + " classes, the model " + config.layers().getFirst() + " and " + config.layers().getLast());
        }
        long start = System.nanoTime();
        int shard = config.globalBatch() / worldSize;
        forEachReplica(r -> r.forward(data, step, shard));
        for (int l = config.layerCount() - 1; l >= 0; l--) {
            int layer = l;
            forEachReplica(r -> r.backward[layer].execute());
            sync.markReady(weightName(layer));
            sync.markReady(biasName(layer));
        }
        BucketSync.StepResult result = sync.finish();
        step++;
        if (result.finite()) {
            forEachReplica(r -> r.update(step));
        }
        double loss = 0;
        for (ReplicaState r : replicas) {
            for (int i = 0; i < shard; i++) {
                loss -= Math.log(Math.max(r.probTrue.get(i), Float.MIN_NORMAL));
            }
        }
        return new StepStats(loss / ((long) shard * replicas.size()), result.finite(), result.globalNorm(), System.nanoTime() - start,
                result.syncNanos(), result.waitNanos());
    }

    /** Steps taken so far. */
    public int steps() {
        return step;
    }

    /** Replica {@code replica}'s current value of {@code parameter}, copied to the host. */
    public float[] parameter(int replica, String parameter) {
        if (replica < 0 || replica >= replicas.size()) {
            throw new IndexOutOfBoundsException("replica " + replica + " is not one of this process's " + replicas.size());
        }
        ReplicaState r = replicas.get(replica);
        int index = buckets.parameters().indexOf(parameter);
        if (index < 0) {
            throw new IllegalArgumentException("unknown parameter '" + parameter + "'; model has " + buckets.parameters());
        }
        FloatArray handle = index % 2 == 0 ? r.weights[index / 2] : r.biases[index / 2];
        DeviceSlice slice = r.bound.get(handle);
        float[] out = new float[handle.getSize()];
        try (HostBuffer h = r.device.allocateHost((long) out.length * 4); DeviceStream s = r.device.createStream()) {
            s.copyToHost(slice.buffer(), slice.byteOffset(), h, 0, (long) out.length * 4);
            s.synchronize();
            for (int i = 0; i < out.length; i++) {
                out[i] = h.segment().getAtIndex(ValueLayout.JAVA_FLOAT, i);
            }
        }
        return out;
    }

    /** Replica {@code replica}'s averaged gradient of {@code parameter} from the last step (after clipping). */
    public Gradient gradient(int replica, String parameter) {
        return buckets.gradient(replica, parameter);
    }

    private interface ReplicaWork {
        void run(ReplicaState r) throws Exception;
    }

    /** Runs {@code work} on every replica at once (each device has its own stream) and waits. */
    private void forEachReplica(ReplicaWork work) {
        List<Future<Void>> futures = new ArrayList<>();
        for (ReplicaState r : replicas) {
            Callable<Void> c = () -> {
                work.run(r);
                return null;
            };
            futures.add(workers.submit(c));
        }
        RuntimeException failure = null;
        for (Future<Void> f : futures) {
            try {
                f.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public void close() {
        workers.shutdown();
        for (ReplicaState r : replicas) {
            r.close();
        }
        sync.close();
        buckets.close();
    }

    // ------------------------------------------------------------------------------------------

    /** One replica's memory and plans on its device. */
    private final class ReplicaState implements AutoCloseable {
        final Device device;
        final Map<KernelArray, DeviceSlice> bound = new IdentityHashMap<>();
        final List<DeviceBuffer> owned = new ArrayList<>();
        final List<ExecutionPlan> plans = new ArrayList<>();
        final FloatArray[] weights;
        final FloatArray[] biases;
        final FloatArray input;
        final IntArray labels;
        final FloatArray probTrue;
        final FloatArray hyper = new FloatArray(6);
        final ExecutionPlan forward;
        final ExecutionPlan[] backward;
        final ExecutionPlan update;

        ReplicaState(int index, Device device, float[][] init) {
            this.device = device;
            Config c = config;
            int rows = c.globalBatch() / worldSize;
            int layers = c.layerCount();
            List<Integer> dims = c.layers();
            weights = new FloatArray[layers];
            biases = new FloatArray[layers];
            FloatArray[] gw = new FloatArray[layers];
            FloatArray[] gb = new FloatArray[layers];
            KernelArray[] gw16 = new KernelArray[layers];
            KernelArray[] gb16 = new KernelArray[layers];
            FloatArray[] act = new FloatArray[layers + 1];   // act[0] input, act[layers] logits
            FloatArray[] delta = new FloatArray[layers + 1]; // delta[l + 1]: gradient at layer l's output
            input = owned(rows * dims.getFirst(), null); // bound: backward of the first layer reads it too
            labels = new IntArray(rows);
            probTrue = new FloatArray(rows);
            act[0] = input;
            for (int l = 0; l < layers; l++) {
                weights[l] = owned(dims.get(l + 1) * dims.get(l), init[2 * l]);
                biases[l] = owned(dims.get(l + 1), init[2 * l + 1]);
                act[l + 1] = owned(rows * dims.get(l + 1), null);
                delta[l + 1] = owned(rows * dims.get(l + 1), null);
                if (c.gradType() == DType.FP32) {
                    gw[l] = bucketView(new FloatArray(weights[l].getSize()), index, weightName(l));
                    gb[l] = bucketView(new FloatArray(biases[l].getSize()), index, biasName(l));
                } else {
                    gw[l] = owned(weights[l].getSize(), null);
                    gb[l] = owned(biases[l].getSize(), null);
                    gw16[l] = bucketView(half(weights[l].getSize()), index, weightName(l));
                    gb16[l] = bucketView(half(biases[l].getSize()), index, biasName(l));
                }
            }

            TaskGraph fwd = new TaskGraph("forward").transferToDevice(DataTransferMode.EVERY_EXECUTION, input, labels);
            for (int l = 0; l < layers; l++) {
                fwd.task("linear" + l, MlpKernels::linear, act[l + 1], act[l], weights[l], biases[l], dims.get(l),
                        dims.get(l + 1), l < layers - 1 ? 1 : 0);
            }
            fwd.task("loss", MlpKernels::softmaxCrossEntropy, probTrue, delta[layers], act[layers], labels,
                    dims.getLast(), 1f / rows); // the mean over this shard
            fwd.transferToHost(DataTransferMode.EVERY_EXECUTION, probTrue);
            forward = plan(fwd);

            backward = new ExecutionPlan[layers];
            for (int l = 0; l < layers; l++) {
                TaskGraph g = new TaskGraph("backward" + l)
                        .task("weightGrad", MlpKernels::weightGrad, gw[l], delta[l + 1], act[l], rows, dims.get(l), dims.get(l + 1))
                        .task("biasGrad", MlpKernels::biasGrad, gb[l], delta[l + 1], rows, dims.get(l + 1));
                if (c.gradType() != DType.FP32) {
                    toHalf(g, "packWeight", gw[l], gw16[l]);
                    toHalf(g, "packBias", gb[l], gb16[l]);
                }
                if (l > 0) {
                    g.task("inputGrad", MlpKernels::inputGrad, delta[l], delta[l + 1], weights[l], act[l], dims.get(l), dims.get(l + 1));
                }
                backward[l] = plan(g);
            }

            TaskGraph upd = new TaskGraph("update").transferToDevice(DataTransferMode.EVERY_EXECUTION, hyper);
            for (int l = 0; l < layers; l++) {
                if (c.gradType() != DType.FP32) {
                    fromHalf(upd, "unpackWeight" + l, gw16[l], gw[l]);
                    fromHalf(upd, "unpackBias" + l, gb16[l], gb[l]);
                }
                if (c.optimizer() == Optimizer.SGD) {
                    upd.task("sgdWeight" + l, MlpKernels::sgd, weights[l], gw[l], hyper);
                    upd.task("sgdBias" + l, MlpKernels::sgd, biases[l], gb[l], hyper);
                } else {
                    upd.task("adamWeight" + l, MlpKernels::adam, weights[l], gw[l], owned(weights[l].getSize(), null),
                            owned(weights[l].getSize(), null), hyper);
                    upd.task("adamBias" + l, MlpKernels::adam, biases[l], gb[l], owned(biases[l].getSize(), null),
                            owned(biases[l].getSize(), null), hyper);
                }
            }
            update = plan(upd);
        }

        private KernelArray half(int size) {
            return config.gradType() == DType.BF16 ? new Bfloat16Array(size) : new HalfArray(size);
        }

        private void toHalf(TaskGraph g, String name, FloatArray in, KernelArray out) {
            if (out instanceof Bfloat16Array b) {
                g.task(name, ConversionKernels::f32ToBf16, in, b);
            } else {
                g.task(name, ConversionKernels::f32ToF16, in, (HalfArray) out);
            }
        }

        private void fromHalf(TaskGraph g, String name, KernelArray in, FloatArray out) {
            if (in instanceof Bfloat16Array b) {
                g.task(name, ConversionKernels::bf16ToF32, b, out);
            } else {
                g.task(name, ConversionKernels::f16ToF32, (HalfArray) in, out);
            }
        }

        /** The weights and biases as one replica of the parameters, for the start-up broadcast. */
        Replica parameters() {
            Replica.Builder b = Replica.on(device);
            for (int l = 0; l < weights.length; l++) {
                for (FloatArray a : new FloatArray[] {weights[l], biases[l]}) {
                    DeviceSlice slice = bound.get(a);
                    b.add(new Gradient((a == weights[l] ? weightName(l) : biasName(l)), slice.buffer(), slice.byteOffset(),
                            a.getSize(), DType.FP32));
                }
            }
            return b.build();
        }

        /** A float array in device memory of its own, zeroed or set to {@code values}. */
        private FloatArray owned(int size, float[] values) {
            FloatArray handle = new FloatArray(size);
            DeviceBuffer buffer = device.allocate(Math.max(4, (long) size * 4));
            owned.add(buffer);
            try (HostBuffer h = device.allocateHost(buffer.byteSize()); DeviceStream s = device.createStream()) {
                h.segment().fill((byte) 0);
                if (values != null) {
                    for (int i = 0; i < values.length; i++) {
                        h.segment().setAtIndex(ValueLayout.JAVA_FLOAT, i, values[i]);
                    }
                }
                s.copyFromHost(h, 0, buffer, 0, buffer.byteSize());
                s.synchronize();
            }
            bound.put(handle, new DeviceSlice(buffer, 0, size));
            return handle;
        }

        /** {@code handle} bound to this replica's view of {@code parameter} in its bucket: no copy to pack. */
        private <A extends KernelArray> A bucketView(A handle, int replica, String parameter) {
            Gradient g = buckets.gradient(replica, parameter);
            bound.put(handle, new DeviceSlice(g.buffer(), g.byteOffset(), Math.toIntExact(g.count())));
            return handle;
        }

        private ExecutionPlan plan(TaskGraph graph) {
            ExecutionPlan p = new ExecutionPlan(graph.snapshot()).withDevice(device);
            bound.forEach((array, slice) -> p.bind(array, device, slice));
            plans.add(p);
            return p;
        }

        void forward(SyntheticData data, int step, int shard) {
            int first = (firstShard + replicas.indexOf(this)) * shard;
            int features = data.features();
            for (int i = 0; i < shard; i++) {
                int row = data.row(step, config.globalBatch(), first + i);
                for (int f = 0; f < features; f++) {
                    input.set(i * features + f, data.feature(row, f));
                }
                labels.set(i, data.label(row));
            }
            forward.execute();
        }

        void update(int t) {
            hyper.set(0, config.learningRate());
            hyper.set(1, BETA1);
            hyper.set(2, BETA2);
            hyper.set(3, EPS);
            hyper.set(4, (float) (1 / (1 - Math.pow(BETA1, t))));
            hyper.set(5, (float) (1 / (1 - Math.pow(BETA2, t))));
            update.execute();
        }

        @Override
        public void close() {
            plans.forEach(ExecutionPlan::close);
            owned.forEach(DeviceBuffer::close);
            for (KernelArray a : bound.keySet()) {
                a.close();
            }
            labels.close();
            probTrue.close();
            hyper.close();
        }
    }
}
