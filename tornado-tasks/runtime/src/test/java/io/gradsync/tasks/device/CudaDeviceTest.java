package io.gradsync.tasks.device;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Needs a CUDA GPU (two for the peer copy to cross GPUs). */
@Tag("gpu")
class CudaDeviceTest extends DeviceContractTest {
    @Override
    List<? extends Device> devices() {
        return twoOf(DeviceRuntime.CUDA);
    }

    @Test
    void reportsComputeCapabilityAndPeers() {
        CudaDevice d = CudaRuntime.device(0);
        assertTrue(d.smVersion() >= 50, d.capability());
        boolean[][] peers = DeviceCatalog.cudaPeerMatrix();
        assertTrue(peers[0][0]);
    }

    /** An untimed event cannot be timed: a clear refusal before the driver is asked (which would say only "invalid handle"). */
    @Test
    void anUntimedEventRefusesToBeTimed() {
        CudaDevice d = CudaRuntime.device(0);
        try (DeviceStream s = d.createStream(); DeviceEvent timed = d.createEvent(); DeviceEvent untimed = d.createUntimedEvent()) {
            s.record(timed);
            s.record(untimed);
            s.synchronize();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> untimed.elapsedMillisSince(timed));
            assertTrue(e.getMessage().contains("without timing"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> timed.elapsedMillisSince(untimed));
            assertTrue(timed.elapsedMillisSince(timed) == 0.0);
        }
    }
}
