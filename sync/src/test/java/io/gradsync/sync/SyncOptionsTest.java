package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** SyncOptions holds one record per backend; what it offered before, field by field, still works the same. */
class SyncOptionsTest {

    @Test
    void defaultsAreEachBackendsDefaults() {
        SyncOptions o = SyncOptions.defaults();
        assertEquals(CpuOptions.defaults(), o.cpu());
        assertEquals(PtxOptions.defaults(), o.ptx());
        assertEquals(OpenClOptions.defaults(), o.openCl());
        assertEquals(NcclOptions.defaults(), o.nccl());
        assertEquals(new SyncOptions(2L << 20, 24, Math.min(24, Runtime.getRuntime().availableProcessors())), o);
        assertEquals(2L << 20, o.chunkBytes());
        assertEquals(24, o.slots());
        assertEquals(32L << 20, o.openClStepBytes());
        assertEquals(Duration.ofMinutes(5), o.timeout());
        assertEquals(SyncOptions.LayoutCheck.EVERY_CALL, o.layoutCheck());
    }

    @Test
    void singleFieldMethodsReachIntoTheirBackendsRecord() {
        SyncOptions o = SyncOptions.defaults().withChunkBytes(1 << 16).withSlots(3).withThreads(2).withOpenClStepBytes(1 << 20)
                .withTimeout(Duration.ofSeconds(9)).withLayoutCheck(SyncOptions.LayoutCheck.ON_CHANGE).withWaitForCaller(false);
        assertEquals(new CpuOptions(1 << 16, 3, 2), o.cpu());
        assertEquals(new OpenClOptions(1 << 20), o.openCl());
        assertEquals(new NcclOptions(Duration.ofSeconds(9), SyncOptions.LayoutCheck.ON_CHANGE), o.nccl());
        assertFalse(o.waitForCaller());
        assertEquals(o, new SyncOptions(1 << 16, 3, 2, Duration.ofSeconds(9), SyncOptions.LayoutCheck.ON_CHANGE,
                PtxOptions.defaults(), 1 << 20, false));
        assertEquals(o.withCpu(CpuOptions.defaults().withChunkBytes(4 << 20)).chunkBytes(), 4 << 20);
    }

    /** The messages, and which of several bad fields is reported, are what the one record of 8 fields gave. */
    @Test
    void badFieldsAreReportedAsBeforeInTheSameOrder() {
        assertMessage("chunkBytes must be >= 4096 and a multiple of 64, got 100",
                () -> new SyncOptions(100, 1, 0, Duration.ZERO, null, null, 1, true));
        assertMessage("slots must be >= 2 so that copies overlap the sum, got 1", () -> SyncOptions.defaults().withSlots(1));
        assertMessage("threads must be >= 1, got 0", () -> SyncOptions.defaults().withThreads(0));
        assertEquals("timeout", assertThrows(NullPointerException.class,
                () -> new SyncOptions(4096, 2, 1, null, null, null, 1, true)).getMessage());
        assertEquals("layoutCheck", assertThrows(NullPointerException.class,
                () -> new SyncOptions(4096, 2, 1, Duration.ZERO, null, null, 1, true)).getMessage());
        assertEquals("ptx", assertThrows(NullPointerException.class,
                () -> new SyncOptions(4096, 2, 1, Duration.ZERO, SyncOptions.LayoutCheck.ON_CHANGE, null, 1, true)).getMessage());
        assertMessage("openClStepBytes must be >= 4096 and a multiple of 64, got 1", () -> new SyncOptions(4096, 2, 1, Duration.ZERO,
                SyncOptions.LayoutCheck.ON_CHANGE, PtxOptions.defaults(), 1, true));
        assertMessage("timeout must be positive, got PT0S", () -> SyncOptions.defaults().withTimeout(Duration.ZERO));
    }

    private static void assertMessage(String message, org.junit.jupiter.api.function.Executable make) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, make).getMessage());
    }
}
