package io.gradsync.train;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Data-parallel equivalence on GPUs: the model kernels as PTX (or OpenCL C), every backend, against one JVM replica. */
@Tag("gpu")
class DataParallelGpuTest {

    @ParameterizedTest(name = "{0} on {1} GPUs, {2}")
    @CsvSource({"cpu, 2, SGD", "cpu, 4, ADAM", "ptx, 2, ADAM", "ptx, 4, SGD", "ptx, 4, ADAM", "opencl, 2, ADAM", "opencl, 4, SGD",
        "nccl, 2, SGD", "nccl, 4, SGD", "nccl, 4, ADAM"})
    void replicasOnGpusFollowOneReplicaOnTheWholeBatch(String backendName, int n, DataParallelTrainer.Optimizer opt) {
        DeviceRuntime rt = runtimeOf(backendName);
        var status = DeviceCatalog.status(rt);
        List<? extends Device> all = DeviceCatalog.gpus(rt); // GPUs only: never PoCL's CPU devices
        assumeTrue(all.size() >= n, () -> n + " " + rt.label() + " GPUs needed: " + status.describe());
        assertFollowsOneReplica(backendName, all.subList(0, n), opt);
    }

    /** The n-GPU schedules where fewer GPUs are lent: n replicas as logical devices over two GPUs. */
    @ParameterizedTest(name = "{0}, {1} replicas sharing GPUs, {2}")
    @CsvSource({"cpu, 4, ADAM", "ptx, 4, SGD", "ptx, 3, ADAM", "opencl, 4, SGD"})
    void replicasSharingGpusFollowOneReplicaOnTheWholeBatch(String backendName, int n, DataParallelTrainer.Optimizer opt) {
        DeviceRuntime rt = runtimeOf(backendName);
        List<? extends Device> shared = DeviceCatalog.sharedGpus(rt, n);
        assumeTrue(!shared.isEmpty(), () -> "a " + rt.label() + " GPU needed: " + DeviceCatalog.status(rt).describe());
        assumeTrue(DeviceCatalog.gpus(rt).size() < n, () -> "enough " + rt.label() + " GPUs here: the " + n + "-GPU cases cover this");
        assertFollowsOneReplica(backendName, shared, opt);
    }

    private static DeviceRuntime runtimeOf(String backendName) {
        return backendName.equals("opencl") ? DeviceRuntime.OPENCL : DeviceRuntime.CUDA;
    }

    private static void assertFollowsOneReplica(String backendName, List<? extends Device> gpus, DataParallelTrainer.Optimizer opt) {
        GradientSynchronizer sync;
        try {
            sync = Synchronizers.create(SyncBackend.parse(backendName), gpus);
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            assumeTrue(false, "backend " + backendName + " unavailable: " + e.getMessage());
            return;
        }
        List<JvmDevice> single = JvmRuntime.createDevices(1);
        var config = DataParallelEquivalenceTest.config(DType.FP32, opt, 1024, 0);
        try (sync; GradientSynchronizer none = Synchronizers.create(SyncBackend.SINGLE, single);
                DataParallelTrainer many = new DataParallelTrainer(gpus, sync, config);
                DataParallelTrainer one = new DataParallelTrainer(single, none, config)) {
            // device code may contract a*b+c into one fma: still within fp32 tolerance of the JVM
            DataParallelEquivalenceTest.assertSameTrajectory(many, one, 6, opt == DataParallelTrainer.Optimizer.ADAM ? 5e-4 : 5e-5);
        } finally {
            single.forEach(JvmDevice::close);
        }
    }
}
