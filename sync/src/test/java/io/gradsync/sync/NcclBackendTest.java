package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.gradsync.nccl.Nccl;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The nccl backend where CI runs: without NCCL (choosing it fails with the loader's reason, auto
 * falls back), and the part of it that needs no GPU: how gradients become NCCL calls.
 */
class NcclBackendTest {
    private List<JvmDevice> devices;

    @BeforeEach
    void setUp() {
        devices = JvmRuntime.createDevices(2);
    }

    @AfterEach
    void tearDown() {
        devices.forEach(JvmDevice::close);
    }

    @Test
    void choosingNcclWithoutNcclFailsWithTheLoadersReason() {
        assumeFalse(Nccl.isAvailable(), () -> "NCCL is installed here: " + Nccl.availability().reason());
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> Synchronizers.create(SyncBackend.NCCL, devices));
        assertTrue(e.getMessage().startsWith("backend nccl is unavailable: "), e.getMessage());
        assertTrue(e.getMessage().contains(Nccl.availability().reason()), e.getMessage());
        assertTrue(e.getMessage().contains("libnccl.so.2"), e.getMessage());
    }

    @Test
    void ncclNeedsCudaDevices() {
        if (Nccl.isAvailable()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Synchronizers.create(SyncBackend.NCCL, devices));
            assertTrue(e.getMessage().contains("needs CUDA GPUs"), e.getMessage());
            assertTrue(e.getMessage().contains("jvm:0"), e.getMessage());
        }
        // Whatever NCCL's state, auto never picks nccl for devices that are not CUDA GPUs.
        assertEquals(SyncBackend.CPU, Synchronizers.resolveAuto(devices, Nccl.availability(), false));
    }

    @Test
    void autoFallsBackToCpu() {
        assumeFalse(Nccl.isAvailable());
        assertEquals(SyncBackend.CPU, Synchronizers.resolveAuto(devices));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.AUTO, devices)) {
            assertEquals(SyncBackend.CPU, sync.backend());
        }
        assertEquals(SyncBackend.SINGLE, Synchronizers.resolveAuto(devices.subList(0, 1)));
    }

    @Test
    void autoUnderALauncherRefusesToAverageOnlyLocally() {
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> Synchronizers.resolveAuto(devices.subList(0, 1), Nccl.availability(), true));
        assertTrue(e.getMessage().contains("WORLD_SIZE"), e.getMessage());
        assertTrue(e.getMessage().contains("not CUDA GPUs"), e.getMessage());
    }

    @Test
    void timeoutOptionHasADefaultAndTheOldConstructorStillWorks() {
        SyncOptions o = new SyncOptions(8192, 3, 4);
        assertEquals(SyncOptions.DEFAULT_TIMEOUT, o.timeout());
        assertEquals(SyncOptions.LayoutCheck.EVERY_CALL, o.layoutCheck());
        SyncOptions t = o.withTimeout(Duration.ofSeconds(7)).withChunkBytes(16384).withLayoutCheck(SyncOptions.LayoutCheck.ON_CHANGE);
        assertEquals(Duration.ofSeconds(7), t.timeout());
        assertEquals(16384, t.chunkBytes());
        assertEquals(SyncOptions.LayoutCheck.ON_CHANGE, t.withSlots(5).withThreads(2).layoutCheck());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> o.withTimeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("timeout must be positive"), e.getMessage());
    }

}
