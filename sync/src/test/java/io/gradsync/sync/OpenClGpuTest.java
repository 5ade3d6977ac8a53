package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The opencl backend on NVIDIA's OpenCL platform (the GPU node registers its ICD first:
 * gpu-node-run does), 2 and 4 GPUs (and 3 or 4 replicas sharing GPUs), exact against float64, replicas bit-identical.
 */
@Tag("gpu")
class OpenClGpuTest {

    static List<OpenClDevice> nvidia(int n) {
        assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
        List<OpenClDevice> gpus = OpenClRuntime.devices().stream()
                .filter(d -> d.platform().name().toUpperCase(java.util.Locale.ROOT).contains("NVIDIA")).toList();
        assumeTrue(gpus.size() >= n, () -> n + " NVIDIA OpenCL devices needed, found " + gpus.size()
                + " (is /etc/OpenCL/vendors/nvidia.icd registered?) among " + OpenClRuntime.devices());
        return gpus.subList(0, n);
    }

    /** NVIDIA's devices, one replica each, or shared: logical devices over two of them. */
    @SuppressWarnings("unchecked")
    static List<OpenClDevice> devices(GpuSet set) {
        if (!set.shared()) {
            return nvidia(set.replicas());
        }
        nvidia(1);
        return (List<OpenClDevice>) set.devices(DeviceRuntime.OPENCL);
    }

    @ParameterizedTest(name = "{0}, {1} x {2}")
    @CsvSource({
        "2, 1, FP32", "2, 65, BF16", "2, 1000003, FP32", "2, 16777217, FP32", "2, 999999, BF16", "2, 77777, FP16",
        "4, 1, FP32", "4, 7, BF16", "4, 4097, FP16", "4, 1000003, FP32", "4, 67108864, FP32", "4, 3000001, BF16",
        "4, 123457, FP16", "4 shared, 1000003, FP32", "3 shared, 4097, FP16"
    })
    void averagesExactly(GpuSet n, long length, DType dtype) {
        List<OpenClDevice> devices = devices(n);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, ThreadLocalRandom.current().nextLong())) {
            sync.synchronize(f.replicas);
            f.assertAveraged();
            RepeatCheck.assertReplicasIdentical(f);
        }
    }

    @ParameterizedTest(name = "{0}, 300 random rounds")
    @ValueSource(strings = {"2", "4", "4 shared"})
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void randomRoundsStayExactAndDeterministic(GpuSet n) {
        List<OpenClDevice> devices = devices(n);
        // 64 KiB steps: most rounds then run a multi-step pipeline, whose cross-queue events are what races would break
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices,
                SyncOptions.defaults().withOpenClStepBytes(64 << 10))) {
            RepeatCheck.randomRounds(sync, devices, 300, 1 << 20, ThreadLocalRandom.current().nextLong());
        }
    }

    @Test
    void hostBuffersArePinnedMappings() {
        OpenClDevice gpu = nvidia(1).getFirst();
        try (HostBuffer host = gpu.allocateHost(64L << 20)) {
            assertTrue(host.isPinned());
            assertTrue(host.byteSize() == 64L << 20);
        }
    }
}
