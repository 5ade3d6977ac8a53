package io.gradsync.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The CI case: the shim loads from the class path, NCCL is absent, and every call fails with
 * an {@link NcclException} that says why, instead of crashing. Skipped where NCCL is installed.
 */
class NcclUnavailableTest {

    @BeforeAll
    static void onlyWithoutNccl() {
        assumeFalse(Nccl.isAvailable(), () -> "NCCL is installed here: " + Nccl.availability().reason());
    }

    @Test
    void shimLoadsButNcclIsReportedAbsentNamingTheLibrary() {
        NcclAvailability a = Nccl.availability();
        assertTrue(a.shimLoaded(), a::reason);
        assertFalse(a.isAvailable());
        assertEquals("libnccl.so.2", a.library());
        assertTrue(a.reason().contains("libnccl.so.2"), a::reason);
        assertTrue(a.reason().contains("default library search path"), a::reason);
        assertTrue(a.version().isEmpty());
        assertTrue(a.loadedFrom().isEmpty());
    }

    @Test
    void availabilityIsComputedOnceAndIsThreadSafe() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            Callable<NcclAvailability> task = Nccl::availability;
            List<Future<NcclAvailability>> results = pool.invokeAll(List.of(task, task, task, task, task, task, task, task));
            for (Future<NcclAvailability> f : results) {
                assertSame(Nccl.availability(), f.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void everyCallFailsWithTheReason() {
        NcclUniqueId id = NcclUniqueId.of(new byte[NcclUniqueId.SIZE]);
        assertUnavailable("ncclGetVersion", Nccl::version);
        assertUnavailable("ncclGetUniqueId", Nccl::newUniqueId);
        assertUnavailable("ncclCommInitAll", () -> Nccl.initAll(0, 1));
        assertUnavailable("ncclCommInitRank", () -> Nccl.initRank(0, 2, id, 1));
        assertUnavailable("ncclCommInitRank", () -> Nccl.initRankOnCurrentDevice(2, id, 0));
        assertUnavailable("ncclGroupStart", Nccl::groupStart);
        assertUnavailable("ncclGroupEnd", Nccl::groupEnd);
        assertUnavailable("ncclGetLastError", Nccl::lastError);
    }

    @Test
    void errorStringFallsBackToLocalText() {
        assertEquals("invalid argument", Nccl.errorString(4));
        assertEquals("unknown", Nccl.errorString(99));
    }

    private static void assertUnavailable(String call, Executable e) {
        NcclException ex = assertThrows(NcclException.class, e);
        assertEquals(call, ex.call());
        assertEquals(NcclException.NOT_AN_NCCL_RESULT, ex.code());
        assertTrue(ex.result().isEmpty());
        assertTrue(ex.getMessage().contains("libnccl.so.2"), ex::getMessage);
        assertTrue(ex.getMessage().startsWith(call + " failed: NCCL is not available"), ex::getMessage);
    }
}
