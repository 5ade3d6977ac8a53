package io.gradsync.tasks.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Two logical devices on GPU 0 keep the whole device contract (copies between them, events
 * ordering their streams), and say that they are one GPU. Needs one CUDA GPU.
 */
@Tag("gpu")
class CudaLogicalDeviceTest extends DeviceContractTest {
    @Override
    List<? extends Device> devices() {
        assumeTrue(CudaRuntime.status().available(), () -> "CUDA unavailable: " + CudaRuntime.status().detail());
        return CudaRuntime.logicalDevices(2, 1);
    }

    @Test
    void logicalDevicesShareTheirGpuUnderIdsOfTheirOwn() {
        assumeTrue(CudaRuntime.status().available(), () -> "CUDA unavailable: " + CudaRuntime.status().detail());
        CudaDevice gpu = CudaRuntime.device(0);
        List<CudaDevice> l = CudaRuntime.logicalDevices(3, 1);
        assertEquals(List.of("cuda:0#0", "cuda:0#1", "cuda:0#2"), l.stream().map(Device::id).toList());
        for (CudaDevice d : l) {
            assertNotSame(gpu, d);
            assertTrue(d.isLogical() && !gpu.isLogical());
            assertTrue(d.sameGpu(gpu) && gpu.sameGpu(d));
            assertTrue(d.canAccessPeer(l.get(0)), "a GPU reaches its own memory");
            d.enablePeerAccess(l.get(0)); // a no-op on one GPU, not a driver error
            assertEquals(gpu.name(), d.name());
            assertEquals(gpu.ordinal(), d.ordinal());
        }
        if (CudaRuntime.devices().size() >= 2) {
            List<CudaDevice> two = CudaRuntime.logicalDevices(4, 2);
            assertEquals(List.of(0, 1, 0, 1), two.stream().map(Device::ordinal).toList());
            assertFalse(two.get(0).sameGpu(two.get(1)));
        }
        assertThrows(IllegalArgumentException.class, () -> CudaRuntime.logicalDevices(0, 1));
        assertThrows(IllegalArgumentException.class, () -> CudaRuntime.logicalDevices(2, CudaRuntime.devices().size() + 1));
        assertThrows(IllegalArgumentException.class, () -> gpu.logical(-1));
    }
}
