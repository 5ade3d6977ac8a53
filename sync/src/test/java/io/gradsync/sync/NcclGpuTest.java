package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.nccl.Nccl;
import io.gradsync.tasks.cuda.CudaDevice;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The nccl backend in one process over 2 and 4 GPUs, exact against the float64 average. */
@Tag("gpu")
class NcclGpuTest {

    @BeforeAll
    static void ncclAndItsEnvironment() {
        assertNotNull(System.getenv("NCCL_NVLS_ENABLE"),
                "set NCCL_NVLS_ENABLE=0: NVLink multicast must stay off on the GPU node");
        assertTrue(Nccl.isAvailable(), () -> Nccl.availability().reason());
    }

    @ParameterizedTest(name = "{0} GPUs, {1} x {2}")
    @CsvSource({
        "2, 1, FP32", "2, 1000003, FP32", "2, 16777216, FP32", "2, 999999, BF16", "2, 77777, FP16",
        "4, 1, FP32", "4, 7, BF16", "4, 1000003, FP32", "4, 16777216, FP32", "4, 3000001, BF16", "4, 123457, FP16"
    })
    void averagesExactly(int n, long length, DType dtype) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, ThreadLocalRandom.current().nextLong())) {
            assertEquals(SyncBackend.NCCL, sync.backend());
            assertEquals(n, sync.worldSize());
            assertEquals(0, sync.rank());
            sync.synchronize(f.replicas);
            f.assertAveraged();
        }
    }

    /** Views with guard bytes between them: merged calls must not spill into the guards. */
    @ParameterizedTest(name = "{0} GPUs, mixed gradients, repeated")
    @ValueSource(ints = {2, 4})
    void averagesManyMixedGradientsRepeatedly(int n) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        long[] counts = {1, 5, 1000, 3, 2049, 777_777, 2, 1024, 65_536, 0};
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP16, DType.FP32,
            DType.BF16, DType.FP32};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, ThreadLocalRandom.current().nextLong())) {
            for (int i = 0; i < 3; i++) {
                sync.synchronize(f.replicas); // averaging an average changes nothing beyond rounding
            }
            sync.barrier();
            f.assertAveraged();
        }
    }

    @Test
    void autoPicksNcclForSeveralGpus() {
        List<CudaDevice> devices = GpuSet.own(2).cuda();
        assertEquals(SyncBackend.NCCL, Synchronizers.resolveAuto(devices));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.AUTO, devices)) {
            assertEquals(SyncBackend.NCCL, sync.backend());
        }
    }

    /** NCCL refuses two ranks on one GPU; gradsync says so before calling it, and auto picks another backend. */
    @Test
    void replicasSharingAGpuAreRejectedBeforeNccl() {
        GpuSet.own(1).cuda(); // CUDA here, or a visible skip
        List<CudaDevice> shared = io.gradsync.tasks.cuda.CudaRuntime.logicalDevices(4, 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Synchronizers.create(SyncBackend.NCCL, shared));
        assertTrue(e.getMessage().contains("one GPU per rank") && e.getMessage().contains(shared.get(0).id()), e.getMessage());
        SyncBackend auto = Synchronizers.resolveAuto(shared);
        assertTrue(auto == SyncBackend.PTX || auto == SyncBackend.CPU, "auto picked " + auto);
    }

    @Test
    void badInputIsRejectedBeforeNcclAndUseAfterCloseFails() {
        List<CudaDevice> devices = GpuSet.own(2).cuda();
        GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices);
        try (ReplicaFixture f = ReplicaFixture.flat(devices, 1000, DType.FP32, 7)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> sync.synchronize(List.of(f.replicas.get(1), f.replicas.get(0))));
            assertTrue(e.getMessage().contains("replica 0"), e.getMessage());
            f.assertUnchanged();
            sync.close();
            sync.close();
            IllegalStateException closed = assertThrows(IllegalStateException.class, () -> sync.synchronize(f.replicas));
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
            assertThrows(IllegalStateException.class, sync::barrier);
            f.assertUnchanged();
        }
    }
}
