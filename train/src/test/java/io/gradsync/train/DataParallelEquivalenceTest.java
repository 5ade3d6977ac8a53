package io.gradsync.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * N replicas on shards of each batch, gradients averaged, follow one replica on the whole batch
 * step by step: the proof that the sync averages the right things at the right time.
 */
class DataParallelEquivalenceTest {
    static final SyntheticData DATA = SyntheticData.generate(7, 512, 12, 5);

    private final List<Device> opened = new ArrayList<>();

    @AfterEach
    void closeDevices() {
        opened.forEach(Device::close);
    }

    static DataParallelTrainer.Config config(DType dtype, DataParallelTrainer.Optimizer opt, long bucketBytes, double maxNorm) {
        float lr = opt == DataParallelTrainer.Optimizer.SGD ? 0.1f : 0.01f;
        // bucket cap small enough that the 3 layers' 6 tensors spread over several buckets
        return new DataParallelTrainer.Config(List.of(12, 24, 16, 5), 48, dtype, opt, lr, bucketBytes, maxNorm, 3);
    }

    private List<? extends Device> jvm(int n) {
        List<JvmDevice> d = JvmRuntime.createDevices(n);
        opened.addAll(d);
        return d;
    }

    /** Steps both trainers together and compares every parameter after every step. */
    static void assertSameTrajectory(DataParallelTrainer many, DataParallelTrainer one, int steps, double tolerance) {
        for (int s = 0; s < steps; s++) {
            DataParallelTrainer.StepStats a = many.step(DATA);
            DataParallelTrainer.StepStats b = one.step(DATA);
            assertEquals(b.loss(), a.loss(), 1e-5 * Math.max(1, b.loss()), "loss at step " + s);
            assertEquals(b.gradNorm(), a.gradNorm(), 1e-4 * b.gradNorm(), "gradient norm at step " + s);
            for (String p : one.parameters()) {
                float[] want = one.parameter(0, p);
                for (int r = 0; r < many.buckets().devices().size(); r++) {
                    float[] got = many.parameter(r, p);
                    for (int i = 0; i < want.length; i++) {
                        double err = Math.abs(got[i] - want[i]);
                        if (err > tolerance * Math.max(1, Math.abs(want[i]))) {
                            throw new AssertionError("step " + s + ", replica " + r + ", " + p + "[" + i + "]: " + got[i]
                                    + " vs " + want[i] + " on one replica");
                        }
                    }
                }
            }
        }
    }

    /**
     * Every replica draws its own weights (as every rank of a framework does); the start-up
     * broadcast leaves all of them with replica 0's, which are the one-replica trainer's.
     */
    @Test
    void replicasStartFromReplicaZerosWeights() {
        List<? extends Device> devices = jvm(3);
        DataParallelTrainer.Config c = config(DType.FP32, DataParallelTrainer.Optimizer.SGD, 1 << 10, 0);
        float[][] drawnBy0 = DataParallelTrainer.initialWeights(c, 0);
        assertTrue(!java.util.Arrays.equals(drawnBy0[0], DataParallelTrainer.initialWeights(c, 1)[0]),
                "replica 1 draws weights of its own before the broadcast");
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
             DataParallelTrainer many = new DataParallelTrainer(devices, sync, c)) {
            List<String> params = many.parameters();
            for (int r = 0; r < 3; r++) {
                for (int p = 0; p < params.size(); p++) {
                    String name = params.get(p);
                    int layer = p / 2;
                    float[] want = drawnBy0[p % 2 == 0 ? 2 * layer : 2 * layer + 1];
                    assertTrue(java.util.Arrays.equals(want, many.parameter(r, name)), "replica " + r + ", " + name + ": not replica 0's weights");
                }
            }
        }
    }

    static Stream<Arguments> jvmCases() {
        return Stream.of(
                Arguments.of(2, DType.FP32, DataParallelTrainer.Optimizer.SGD, 0.0),
                Arguments.of(4, DType.FP32, DataParallelTrainer.Optimizer.SGD, 0.0),
                Arguments.of(3, DType.FP32, DataParallelTrainer.Optimizer.ADAM, 0.0),
                Arguments.of(4, DType.FP32, DataParallelTrainer.Optimizer.SGD, 0.5));
    }

    @ParameterizedTest(name = "{0} JVM replicas, cpu backend, {1} {2} maxNorm={3}")
    @MethodSource("jvmCases")
    void replicasOnShardsFollowOneReplicaOnTheWholeBatch(int n, DType dtype, DataParallelTrainer.Optimizer opt, double maxNorm) {
        var config = config(dtype, opt, 1024, maxNorm);
        List<? extends Device> devices = jvm(n);
        List<? extends Device> single = jvm(1);
        try (GradientSynchronizer cpu = Synchronizers.create(SyncBackend.CPU, devices);
                GradientSynchronizer none = Synchronizers.create(SyncBackend.SINGLE, single);
                DataParallelTrainer many = new DataParallelTrainer(devices, cpu, config);
                DataParallelTrainer one = new DataParallelTrainer(single, none, config)) {
            assertTrue(many.buckets().buckets().size() >= 3, "several buckets: " + many.buckets().buckets());
            // Adam divides by sqrt(v): summation-order differences of ~1e-7 grow a little where v is tiny
            assertSameTrajectory(many, one, 6, opt == DataParallelTrainer.Optimizer.ADAM ? 2e-4 : 2e-5);
        }
    }

    @Test
    void halfPrecisionGradientsTrainLikeFp32WithinTheirRounding() {
        for (DType dtype : new DType[] {DType.BF16, DType.FP16}) {
            List<? extends Device> devices = jvm(2);
            List<? extends Device> single = jvm(1);
            try (GradientSynchronizer cpu = Synchronizers.create(SyncBackend.CPU, devices);
                    GradientSynchronizer none = Synchronizers.create(SyncBackend.SINGLE, single);
                    DataParallelTrainer half = new DataParallelTrainer(devices, cpu,
                            config(dtype, DataParallelTrainer.Optimizer.SGD, 1024, 0));
                    DataParallelTrainer full = new DataParallelTrainer(single, none,
                            config(DType.FP32, DataParallelTrainer.Optimizer.SGD, 1024, 0))) {
                double first = 0;
                double last = 0;
                for (int s = 0; s < 30; s++) {
                    double h = half.step(DATA).loss();
                    double f = full.step(DATA).loss();
                    first = s == 0 ? h : first;
                    last = h;
                    assertEquals(f, h, 0.05 * f + 1e-3, dtype + " loss at step " + s);
                }
                assertTrue(last < 0.7 * first, dtype + ": loss must fall, " + first + " -> " + last);
            }
        }
    }

    @Test
    void trainingLowersTheLoss() {
        List<? extends Device> devices = jvm(4);
        try (GradientSynchronizer cpu = Synchronizers.create(SyncBackend.CPU, devices);
                DataParallelTrainer t = new DataParallelTrainer(devices, cpu,
                        config(DType.FP32, DataParallelTrainer.Optimizer.ADAM, io.gradsync.sync.bucket.GradientBuckets.DEFAULT_BUCKET_BYTES, 0))) {
            double first = t.step(DATA).loss();
            double last = first;
            for (int s = 0; s < 60; s++) {
                last = t.step(DATA).loss();
            }
            assertTrue(first > 1.0, "an untrained 5-class model starts near ln 5: " + first);
            assertTrue(last < 0.6 * first, "loss " + first + " -> " + last);
        }
    }

    /**
     * The same on PoCL (or any OpenCL device): the model kernels compiled to OpenCL C, through
     * whichever backend {@code Synchronizers.create} accepts for those devices, against JVM replicas.
     */
    @Test
    void openClReplicasFollowOneJvmReplica() {
        var status = DeviceCatalog.status(DeviceRuntime.OPENCL);
        Assumptions.assumeTrue(status.available(), () -> "OpenCL unavailable: " + status);
        List<? extends Device> listed = DeviceCatalog.listed(DeviceRuntime.OPENCL);
        Assumptions.assumeTrue(!listed.isEmpty(), "no OpenCL device");
        int n = Math.min(2, listed.size());
        List<? extends Device> cl = DeviceCatalog.select(DeviceRuntime.OPENCL, n);
        opened.addAll(cl);
        List<? extends Device> single = jvm(1);
        var config = config(DType.FP32, DataParallelTrainer.Optimizer.SGD, 1024, 0);
        List<String> tried = new ArrayList<>();
        for (SyncBackend backend : List.of(SyncBackend.OPENCL, SyncBackend.CPU, SyncBackend.SINGLE)) {
            GradientSynchronizer sync;
            try {
                sync = Synchronizers.create(backend, cl);
            } catch (RuntimeException e) {
                tried.add(backend.label() + ": " + e.getMessage());
                System.out.println("[skip] backend " + backend.label() + " on " + n + " OpenCL device(s): " + e.getMessage());
                continue;
            }
            try (sync; GradientSynchronizer none = Synchronizers.create(SyncBackend.SINGLE, single);
                    DataParallelTrainer many = new DataParallelTrainer(cl, sync, config);
                    DataParallelTrainer one = new DataParallelTrainer(single, none, config)) {
                assertSameTrajectory(many, one, 4, 2e-5);
            }
            tried.add(backend.label() + ": ok");
        }
        System.out.println("OpenCL equivalence: " + tried);
        assertTrue(tried.stream().anyMatch(t -> t.endsWith(": ok")), "no backend ran on OpenCL: " + tried);
    }
}
