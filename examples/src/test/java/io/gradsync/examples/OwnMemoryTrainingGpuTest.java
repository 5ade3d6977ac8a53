package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.SyncBackend;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The user-side trainer on GPUs with its own cuMemAlloc memory and CUDA streams (replicas share GPUs where few). */
@Tag("gpu")
class OwnMemoryTrainingGpuTest {

    @ParameterizedTest(name = "{0}, {1} replicas, buckets {2}")
    @CsvSource({"ptx, 2, false", "ptx, 2, true", "cpu, 2, false", "cpu, 3, true", "nccl, 1, false", "single, 1, true"})
    void replicasOnShardsFollowOneReplicaOnTheBatch(String backend, int n, boolean buckets) {
        List<? extends Device> gpus = DeviceCatalog.gpus(DeviceRuntime.CUDA);
        assumeTrue(!gpus.isEmpty(), () -> DeviceCatalog.status(DeviceRuntime.CUDA).describe());
        List<? extends Device> devices = gpus.size() >= n ? gpus.subList(0, n) : DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n);
        OwnMemoryTraining.Result r;
        try {
            r = OwnMemoryTraining.train(new OwnMemoryTraining.Config(SyncBackend.parse(backend), devices, buckets, 30, 128, 384, 7));
        } catch (UnsupportedOperationException e) { // a backend that does not run here (nccl without NCCL) says why
            assumeTrue(false, e.getMessage());
            return;
        }
        assertTrue(r.maxDifferenceFromOneReplica() < 1e-5, () -> "differs by " + r.maxDifferenceFromOneReplica());
        assertTrue(r.loss() < r.initialLoss() / 2, () -> "loss " + r.loss() + " from " + r.initialLoss());
    }
}
