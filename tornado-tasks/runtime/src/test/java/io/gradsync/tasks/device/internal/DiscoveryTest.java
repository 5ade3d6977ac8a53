package io.gradsync.tasks.device.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.RuntimeStatus;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Discovery never throws; an unavailable runtime says why in one line. */
class DiscoveryTest {

    @Test
    void everyRuntimeReportsAStatusWithoutThrowing() {
        List<RuntimeStatus> statuses = DeviceCatalog.statuses();
        assertEquals(3, statuses.size());
        for (RuntimeStatus s : statuses) {
            assertFalse(s.detail().isBlank(), s.runtime() + " has no detail");
            assertEquals(1, s.describe().lines().count(), "one line: " + s.describe());
            if (!s.available()) {
                assertTrue(s.describe().contains("unavailable: "), s.describe());
                assertThrows(IllegalArgumentException.class, () -> DeviceCatalog.select(s.runtime(), 1));
            }
        }
        assertTrue(DeviceCatalog.status(DeviceRuntime.JVM).available());
    }

    /** The lookup runs once, however many threads ask first; asking for a missing device names what exists. */
    @Test
    void aRuntimeIsLookedForOnceAndItsDevicesAreCheckedOnRequest() throws Exception {
        java.util.concurrent.atomic.AtomicInteger looks = new java.util.concurrent.atomic.AtomicInteger();
        Discovery<String> found = new Discovery<>("Test", () -> {
            looks.incrementAndGet();
            return new Discovery.Found<>(RuntimeStatus.available(DeviceRuntime.JVM, 2, "two"), List.of("a", "b"));
        });
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(8)) {
            List<java.util.concurrent.Future<List<String>>> all = new java.util.ArrayList<>();
            for (int i = 0; i < 32; i++) {
                all.add(pool.submit(found::devices));
            }
            for (var f : all) {
                assertEquals(List.of("a", "b"), f.get());
            }
        }
        assertEquals(1, looks.get());
        assertEquals("b", found.device(1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> found.device(2));
        assertEquals("no Test device 2; this machine has 2", e.getMessage());

        Discovery<String> missing = new Discovery<>("Test", () -> Discovery.Found.none(
                RuntimeStatus.unavailable(DeviceRuntime.JVM, "libtest.so not found")));
        assertEquals(List.of(), missing.devices());
        assertFalse(missing.status().available());
        IllegalStateException u = assertThrows(IllegalStateException.class, () -> missing.device(0));
        assertEquals("Test is unavailable: libtest.so not found", u.getMessage());
    }

    /** Shared GPUs exist only where GPUs do: none for JVM devices or PoCL's CPU devices. */
    @Test
    void sharedGpusAreLogicalGpusOrNone() {
        assertEquals(List.of(), DeviceCatalog.sharedGpus(DeviceRuntime.JVM, 4));
        assertThrows(IllegalArgumentException.class, () -> DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, 0));
        for (DeviceRuntime rt : List.of(DeviceRuntime.CUDA, DeviceRuntime.OPENCL)) {
            List<? extends Device> shared = DeviceCatalog.sharedGpus(rt, 4);
            assertEquals(DeviceCatalog.gpus(rt).isEmpty() ? 0 : 4, shared.size(), rt + ": " + shared);
            assertEquals(shared.size(), shared.stream().map(Device::id).distinct().count(), "distinct ids: " + shared);
        }
    }

    @Test
    void cudaWithoutADriverNamesTheMissingLibrary() {
        RuntimeStatus cuda = DeviceCatalog.status(DeviceRuntime.CUDA);
        assumeTrue(!cuda.available(), "a CUDA driver is present here");
        assertTrue(cuda.detail().contains("libcuda.so.1") || cuda.detail().contains("no GPU")
                || cuda.detail().contains("cuInit"), cuda.detail());
    }

    /** CI installs PoCL, so there this must find its CPU device. */
    @Test
    void openClListsItsPlatformsAndDevices() {
        RuntimeStatus cl = OpenClRuntime.status();
        assumeTrue(cl.available(), () -> "OpenCL unavailable, skipped: " + cl.detail());
        List<OpenClDevice> devices = OpenClRuntime.devices();
        assertEquals(cl.deviceCount(), devices.size());
        for (int i = 0; i < devices.size(); i++) {
            OpenClDevice d = devices.get(i);
            assertEquals(i, d.ordinal());
            assertEquals("opencl:" + i, d.id());
            assertTrue(d.capability().startsWith("OpenCL"), d.capability());
            assertTrue(cl.detail().contains(d.platform().name()), cl.detail());
        }
        if (System.getenv("CI") != null) {
            assertTrue(OpenClRuntime.platforms().stream().anyMatch(p -> p.name().contains("Portable Computing Language")),
                    "CI installs PoCL: " + cl.detail());
        }
    }

    @Test
    void selectRejectsImpossibleCounts() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DeviceCatalog.select(DeviceRuntime.JVM, 0));
        assertTrue(e.getMessage().contains("at least 1"), e.getMessage());
        RuntimeStatus cl = OpenClRuntime.status();
        if (cl.available()) {
            e = assertThrows(IllegalArgumentException.class, () -> DeviceCatalog.select(DeviceRuntime.OPENCL, 1000));
            assertTrue(e.getMessage().contains("1000"), e.getMessage());
        }
    }
}
