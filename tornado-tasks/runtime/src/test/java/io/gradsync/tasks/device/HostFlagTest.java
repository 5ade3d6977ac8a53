package io.gradsync.tasks.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClRuntime;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A stream held by a host flag runs on only once the host raises it, however far ahead it counts. */
class HostFlagTest {

    static void holdsTheStreamUntilRaised(Device d) throws InterruptedException {
        try (DeviceStream s = d.createStream(); HostFlag f = d.createHostFlag()) {
            assertEquals(0, f.value());
            for (int g : new int[] {1, 2, Integer.MAX_VALUE, Integer.MIN_VALUE, Integer.MIN_VALUE + 5}) { // wraps
                s.waitUntil(f, g);
                DeviceEvent after = s.record();
                Thread.sleep(30);
                assertFalse(after.isDone(), "ran on before the host raised the flag to " + g);
                f.raise(g);
                after.synchronize();
                assertTrue(after.isDone());
                assertEquals(g, f.value());
                after.close();
            }
        }
    }

    @Test
    void onJvmDevices() throws InterruptedException {
        Device d = JvmRuntime.createDevices(1).getFirst();
        holdsTheStreamUntilRaised(d);
        d.close();
    }

    @Test
    void openClHasNone() {
        assumeTrue(OpenClRuntime.status().available(), () -> OpenClRuntime.status().detail());
        Device d = OpenClRuntime.logicalDevices(1).getFirst();
        assertThrows(UnsupportedOperationException.class, d::createHostFlag);
        d.close();
    }

    @Test
    @Tag("gpu")
    void onCudaGpus() throws InterruptedException {
        assumeTrue(CudaRuntime.status().available(), () -> CudaRuntime.status().describe());
        holdsTheStreamUntilRaised(CudaRuntime.device(0));
    }
}
