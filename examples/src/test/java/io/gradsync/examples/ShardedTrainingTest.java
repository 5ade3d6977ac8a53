package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.SyncBackend;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sharded trainer (ZeRO-2: reduce-scatter, AdamW on the shard, all-gather) against the
 * unsharded one (average, AdamW on everything), from weights drawn differently per replica and
 * broadcast from replica 0: the same parameters to the bit after every run, on every replica, with
 * 1/N of the optimizer state.
 */
class ShardedTrainingTest {

    @ParameterizedTest(name = "{0}, {1} replicas on {2}")
    @CsvSource({"cpu, 3, jvm", "cpu, 2, jvm", "opencl, 2, opencl", "single, 1, jvm"})
    void shardedTrainingEqualsUnshardedTrainingBitForBit(String backend, int n, String runtime) {
        List<? extends Device> devices;
        if (runtime.equals("opencl")) {
            assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
            devices = OpenClRuntime.logicalDevices(n);
        } else {
            devices = JvmRuntime.createDevices(n);
        }
        try {
            check(backend, devices);
        } finally {
            devices.forEach(Device::close);
        }
    }

    @ParameterizedTest(name = "{0}, {1} replicas on GPUs")
    @CsvSource({"ptx, 2", "ptx, 3", "cpu, 3"})
    @Tag("gpu")
    void shardedTrainingEqualsUnshardedTrainingBitForBitOnGpus(String backend, int n) {
        List<? extends Device> gpus = DeviceCatalog.gpus(DeviceRuntime.CUDA);
        assumeTrue(!gpus.isEmpty(), () -> DeviceCatalog.status(DeviceRuntime.CUDA).describe());
        check(backend, gpus.size() >= n ? gpus.subList(0, n) : DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n));
    }

    private static void check(String backend, List<? extends Device> devices) {
        int n = devices.size();
        ShardedTraining.Result r = ShardedTraining.train(new ShardedTraining.Config(SyncBackend.parse(backend), devices, 12, 3000, 48, 5));
        assertEquals(0, r.differingBits(), "elements whose bits differ between the sharded and the unsharded run");
        for (int k = 0; k < 2; k++) {
            for (int rep = 1; rep < n; rep++) {
                assertTrue(Arrays.equals(r.sharded().getFirst()[k], r.sharded().get(rep)[k]), "replica " + rep + " differs from replica 0");
            }
        }
        long sharded = r.optimizerState()[0];
        long whole = r.optimizerState()[1];
        assertTrue(sharded * n <= whole + 2L * 64 * n * n, () -> "sharded state " + sharded + " floats, unsharded " + whole);
        assertTrue(r.sharded().getFirst()[1][0] != 0f, "the bias moved: training happened");
    }
}
