package io.gradsync.sync;

import io.gradsync.tasks.cuda.CudaDevice;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Host staging on real GPUs: pinned memory, one stream per direction per GPU. */
@Tag("gpu")
class CpuStagingGpuTest {

    @ParameterizedTest(name = "{0}, {1} x {2}")
    @CsvSource({
        "2, 1, FP32", "2, 1000003, FP32", "2, 4194304, FP32", "2, 999999, BF16", "2, 77777, FP16",
        "4, 1, FP32", "4, 7, BF16", "4, 1000003, FP32", "4, 16777216, FP32", "4, 3000001, BF16", "4, 123457, FP16",
        "3, 1048577, FP32", "4 shared, 1000003, FP32", "3 shared, 77777, FP16"
    })
    void averagesExactlyOnGpus(GpuSet n, long length, DType dtype) {
        List<CudaDevice> devices = n.cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, ThreadLocalRandom.current().nextLong())) {
            sync.synchronize(f.replicas);
            f.assertAveraged();
        }
    }

    @ParameterizedTest(name = "{0}, mixed gradients, small ring")
    @CsvSource({"2", "4", "4 shared"})
    void averagesManyMixedGradientsThroughASmallRing(GpuSet n) {
        List<CudaDevice> devices = n.cuda();
        long[] counts = {1, 5, 1000, 3, 2049, 777_777, 2, 1024, 65_536};
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP16, DType.FP32, DType.BF16};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, new SyncOptions(8192, 3, 4));
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, ThreadLocalRandom.current().nextLong())) {
            for (int i = 0; i < 3; i++) {
                sync.synchronize(f.replicas); // averaging an average changes nothing beyond rounding
            }
            f.assertAveraged();
        }
    }
}
