package io.gradsync.tasks.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Logical OpenCL devices (several over one physical device), mapped host memory and program builds. */
class OpenClLogicalDevicesTest {
    private List<OpenClDevice> devices = List.of();

    private List<OpenClDevice> logical(int n) {
        assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
        devices = OpenClRuntime.logicalDevices(n);
        return devices;
    }

    @AfterEach
    void close() {
        devices.forEach(OpenClDevice::close);
    }

    @Test
    void logicalDevicesAreDistinctAndCycleThePhysicalOnes() {
        List<OpenClDevice> l = logical(5);
        assertEquals(5, l.stream().map(Device::id).distinct().count(), l.toString());
        for (int i = 0; i < l.size(); i++) {
            OpenClDevice physical = OpenClRuntime.devices().get(i % OpenClRuntime.devices().size());
            assertEquals(physical.ordinal(), l.get(i).ordinal());
            assertEquals(physical.name(), l.get(i).name());
            assertNotSame(physical, l.get(i));
            assertTrue(l.get(i).isLogical() && !physical.isLogical());
        }
        assertThrows(IllegalArgumentException.class, () -> OpenClRuntime.logicalDevices(0));
    }

    /** A copy on one logical device, ordered after another's work by its event, sees that work. */
    @Test
    void eventsOrderQueuesOfDifferentLogicalDevices() {
        List<OpenClDevice> l = logical(2);
        int n = 1 << 20;
        try (DeviceBuffer a = l.get(0).allocate(n); DeviceBuffer b = l.get(1).allocate(n);
                HostBuffer out = l.get(1).allocateHost(n); DeviceStream s0 = l.get(0).createStream();
                DeviceStream s1 = l.get(1).createStream(); DeviceEvent filled = l.get(0).createEvent()) {
            s0.fill32(a, 0, n, 0x01020304);
            s0.record(filled);
            s1.waitFor(filled);
            s1.copy(a, 0, b, 0, n);
            s1.copyToHost(b, 0, out, 0, n);
            s1.synchronize();
            assertEquals(0x01020304, out.segment().getAtIndex(ValueLayout.JAVA_INT, n / 4 - 1));
            assertThrows(IllegalArgumentException.class, () -> s1.copyToHost(a, 0, out, 0, 4),
                    "a logical device's queue copies only its own buffers to the host");
        }
    }

    @Test
    void hostMemoryIsAMappedPinnedBuffer() {
        OpenClDevice d = logical(1).getFirst();
        HostBuffer h = d.allocateHost(12345); // closed by the test itself: that is what it checks
        assertTrue(h.isPinned());
        assertEquals(12345, h.byteSize());
        h.segment().set(ValueLayout.JAVA_BYTE, 12344, (byte) 7);
        assertEquals(7, h.segment().get(ValueLayout.JAVA_BYTE, 12344));
        h.close();
        assertTrue(h.isClosed());
        assertThrows(IllegalStateException.class, h::segment);
    }

    @Test
    void aFailedBuildThrowsWithTheCompilerLog() {
        OpenClDevice d = logical(1).getFirst();
        DeviceException e = assertThrows(DeviceException.class,
                () -> io.gradsync.tasks.opencl.driver.OpenClHandles.buildProgram(d, "__kernel void broken(__global float* x) { x[0] = undefined_name; }", "", "broken"));
        assertTrue(e.getMessage().contains("clBuildProgram(broken)"), e.getMessage());
        assertTrue(e.getMessage().contains("undefined_name"), "the build log names the error: " + e.getMessage());
    }
}
