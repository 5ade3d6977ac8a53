package io.gradsync.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Misuse is rejected in Java before NCCL sees it: these run without NCCL, and the comm tests
 * use a recording stand-in for the native calls to prove nothing reached them.
 */
class NcclArgumentValidationTest {
    private static final NcclUniqueId ID = NcclUniqueId.of(new byte[NcclUniqueId.SIZE]);

    @Test
    void initAllRejectsBadDeviceLists() {
        assertThrows(NullPointerException.class, () -> Nccl.initAll((int[]) null));
        assertThrows(IllegalArgumentException.class, () -> Nccl.initAll());
        assertThrows(IllegalArgumentException.class, () -> Nccl.initAll(0, -1));
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class, () -> Nccl.initAll(0, 1, 0));
        assertTrue(dup.getMessage().contains("twice"), dup::getMessage);
    }

    @Test
    void initRankRejectsBadRanksIdsAndDevices() {
        assertThrows(NullPointerException.class, () -> Nccl.initRank(0, 2, null, 0));
        assertThrows(IllegalArgumentException.class, () -> Nccl.initRank(-1, 2, ID, 0));
        assertThrows(IllegalArgumentException.class, () -> Nccl.initRank(0, 0, ID, 0));
        assertThrows(IllegalArgumentException.class, () -> Nccl.initRank(0, -3, ID, 0));
        assertThrows(IllegalArgumentException.class, () -> Nccl.initRank(0, 2, ID, 2));
        assertThrows(IllegalArgumentException.class, () -> Nccl.initRank(0, 2, ID, -1));
        assertThrows(IllegalArgumentException.class, () -> Nccl.initRankOnCurrentDevice(4, ID, 4));
        assertThrows(NullPointerException.class, () -> Nccl.initRankOnCurrentDevice(4, null, 0));
        assertThrows(NullPointerException.class, () -> Nccl.closeAll(null));
    }

    @Test
    void allReduceRejectsBadArgumentsWithoutCallingNccl() {
        RecordingCommCalls rec = new RecordingCommCalls();
        NcclComm comm = new NcclComm(0x1000, -1, rec);
        assertThrows(NullPointerException.class, () -> comm.allReduce(8, 8, 1, null, NcclRedOp.SUM, 0));
        assertThrows(NullPointerException.class, () -> comm.allReduce(8, 8, 1, NcclDataType.FLOAT32, null, 0));
        assertThrows(IllegalArgumentException.class,
            () -> comm.allReduce(8, 8, -1, NcclDataType.FLOAT32, NcclRedOp.SUM, 0));
        assertThrows(IllegalArgumentException.class,
            () -> comm.allReduce(0, 8, 1, NcclDataType.FLOAT32, NcclRedOp.SUM, 0));
        assertThrows(IllegalArgumentException.class,
            () -> comm.allReduce(8, 0, 1, NcclDataType.FLOAT32, NcclRedOp.SUM, 0));
        assertThrows(IllegalArgumentException.class,
            () -> comm.allReduceInPlace(8, Long.MAX_VALUE / 2, NcclDataType.FLOAT32, NcclRedOp.AVG, 0));
        assertEquals(0, rec.calls.size(), rec.calls::toString);

        // Zero elements may come with null buffers; the values NCCL gets are the enums' NCCL values.
        comm.allReduce(0, 0, 0, NcclDataType.BFLOAT16, NcclRedOp.AVG, 0);
        comm.allReduceInPlace(64, 10, NcclDataType.FLOAT16, NcclRedOp.SUM, 77);
        assertEquals("allReduce 0 0 0 9 4 0", rec.calls.get(0));
        assertEquals("allReduce 64 64 10 6 0 77", rec.calls.get(1));
    }

    @Test
    void closedCommThrowsIllegalStateAndClosesOnce() {
        RecordingCommCalls rec = new RecordingCommCalls();
        NcclComm comm = new NcclComm(0x1000, 3, rec);
        assertEquals(4, comm.count());
        assertEquals(2, comm.cuDevice());
        assertEquals(1, comm.userRank());
        assertEquals(NcclResult.SUCCESS, comm.asyncError());
        comm.close();
        comm.close();
        comm.abort();
        assertTrue(comm.isClosed());
        assertEquals(1, rec.calls.stream().filter(c -> c.startsWith("destroy") || c.startsWith("abort")).count());
        assertTrue(rec.calls.contains("destroy 3"), rec.calls::toString);

        assertThrows(IllegalStateException.class, comm::count);
        assertThrows(IllegalStateException.class, comm::cuDevice);
        assertThrows(IllegalStateException.class, comm::userRank);
        assertThrows(IllegalStateException.class, comm::asyncError);
        assertThrows(IllegalStateException.class, comm::checkAsyncError);
        assertThrows(IllegalStateException.class, comm::lastError);
        assertThrows(IllegalStateException.class, comm::finalizeComm);
        assertThrows(IllegalStateException.class,
            () -> comm.allReduce(8, 8, 1, NcclDataType.FLOAT32, NcclRedOp.SUM, 0));
    }

    @Test
    void abortClosesWithoutDestroy() {
        RecordingCommCalls rec = new RecordingCommCalls();
        NcclComm comm = new NcclComm(0x1000, -1, rec);
        comm.abort();
        comm.close();
        assertEquals(java.util.List.of("abort -1"), rec.calls);
        assertThrows(IllegalStateException.class, comm::count);
    }

    @Test
    void checkAsyncErrorThrowsWithNcclTextAndLastError() {
        RecordingCommCalls rec = new RecordingCommCalls();
        NcclComm comm = new NcclComm(0x1000, -1, rec);
        comm.checkAsyncError();
        rec.asyncError = NcclResult.IN_PROGRESS.code();
        comm.checkAsyncError();
        rec.asyncError = NcclResult.REMOTE_ERROR.code();
        NcclException ex = assertThrows(NcclException.class, comm::checkAsyncError);
        assertEquals("ncclCommGetAsyncError", ex.call());
        assertEquals(6, ex.code());
        assertEquals(NcclResult.REMOTE_ERROR, ex.result().orElseThrow());
        assertEquals("peer 3 went away", ex.lastError());
        assertTrue(ex.getMessage().contains("REMOTE_ERROR (6)"), ex::getMessage);
        assertTrue(ex.getMessage().contains("peer 3 went away"), ex::getMessage);
    }

    @Test
    void closeWaitsForCallsInFlight() throws Exception {
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        RecordingCommCalls rec = new RecordingCommCalls() {
            @Override
            public int count(long comm) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                calls.add("count done");
                return 4;
            }
        };
        NcclComm comm = new NcclComm(0x1000, -1, rec);
        Thread caller = Thread.ofPlatform().start(comm::count);
        entered.await();
        Thread closer = Thread.ofPlatform().start(comm::close);
        awaitBlocked(closer); // the close has reached the lock held by the call in flight
        assertTrue(rec.calls.isEmpty(), "destroy must wait for the call in flight: " + rec.calls);
        release.countDown();
        caller.join();
        closer.join();
        assertEquals(java.util.List.of("count done", "destroy -1"), rec.calls);
    }

    @Test
    void closeAllClosesEveryCommAndKeepsTheFirstFailure() {
        RecordingCommCalls ok = new RecordingCommCalls();
        RecordingCommCalls failing = new RecordingCommCalls() {
            @Override
            public void destroy(long comm, int boundDevice) {
                throw new NcclException("ncclCommDestroy", 3, "internal error", null);
            }
        };
        NcclComm a = new NcclComm(1, -1, failing);
        NcclComm b = new NcclComm(2, -1, ok);
        NcclComm c = new NcclComm(3, -1, failing);
        NcclException ex = assertThrows(NcclException.class, () -> Nccl.closeAll(java.util.List.of(a, b, c)));
        assertEquals(1, ex.getSuppressed().length);
        assertTrue(a.isClosed() && b.isClosed() && c.isClosed());
        assertEquals(java.util.List.of("destroy -1"), ok.calls);
    }

    /** Waits (up to 30 s) until {@code t} blocks or waits: deterministic where a sleep would only hope. */
    private static void awaitBlocked(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (t.getState() == Thread.State.NEW || t.getState() == Thread.State.RUNNABLE) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(t + " never blocked; it is " + t.getState());
            }
            Thread.sleep(1);
        }
    }
}
