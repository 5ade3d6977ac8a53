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

    /** The calls that would have moved data: everything but the count and rank queries. */
    private static java.util.List<String> moved(RecordingCommCalls rec) {
        return rec.calls.stream().filter(c -> !c.equals("count") && !c.equals("userRank")).toList();
    }

    private static void assertMessage(IllegalArgumentException e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), () -> "'" + part + "' not in: " + e.getMessage());
        }
    }

    @Test
    void broadcastRejectsBadArgumentsWithoutCallingNccl() {
        RecordingCommCalls rec = new RecordingCommCalls(); // 4 ranks, this one rank 1
        NcclComm comm = new NcclComm(0x1000, -1, rec);
        assertThrows(NullPointerException.class, () -> comm.broadcast(8, 8, 1, null, 0, 0));
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.broadcast(8, 8, -1, NcclDataType.FLOAT32, 0, 0)), "count must be >= 0: -1");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.broadcastInPlace(8, Long.MAX_VALUE / 2, NcclDataType.FLOAT32, 0, 0)), "count too large");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.broadcast(8, 8, 1, NcclDataType.FLOAT32, -1, 0)), "root must be a rank", "-1");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.broadcast(8, 8, 1, NcclDataType.FLOAT32, 4, 0)), "root 4 is not a rank", "0..3");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.broadcast(8, 0, 1, NcclDataType.FLOAT32, 0, 0)), "null device buffer", "recv=0x0");
        // The send buffer is read on the root only: 0 is refused there (this comm is rank 1), accepted elsewhere.
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.broadcast(0, 8, 1, NcclDataType.FLOAT32, 1, 0)), "send=0x0 on the root rank 1");
        assertEquals(java.util.List.of(), moved(rec));

        comm.broadcast(0, 8, 1, NcclDataType.FLOAT32, 2, 5);
        comm.broadcastInPlace(64, 10, NcclDataType.FLOAT16, 3, 77);
        comm.broadcast(0, 0, 0, NcclDataType.BFLOAT16, 0, 0);
        assertEquals(java.util.List.of("broadcast 0 8 1 7 root 2 5", "broadcast 64 64 10 6 root 3 77",
            "broadcast 0 0 0 9 root 0 0"), moved(rec));
        assertEquals(1, rec.calls.stream().filter("count"::equals).count(), "the rank count is asked once: " + rec.calls);
    }

    @Test
    void reduceRejectsBadArgumentsWithoutCallingNccl() {
        RecordingCommCalls rec = new RecordingCommCalls(); // 4 ranks, this one rank 1
        NcclComm comm = new NcclComm(0x1000, -1, rec);
        assertThrows(NullPointerException.class, () -> comm.reduce(8, 8, 1, null, NcclRedOp.AVG, 0, 0));
        assertThrows(NullPointerException.class, () -> comm.reduce(8, 8, 1, NcclDataType.FLOAT32, null, 0, 0));
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduce(8, 8, -3, NcclDataType.FLOAT32, NcclRedOp.AVG, 0, 0)), "count must be >= 0: -3");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduceInPlace(8, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, -2, 0)), "root must be a rank", "-2");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduceInPlace(8, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, 9, 0)), "root 9 is not a rank", "0..3");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduce(0, 8, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, 0, 0)), "null device buffer", "send=0x0");
        // The receive buffer is written on the root only: 0 is refused there (this comm is rank 1), accepted elsewhere.
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduce(8, 0, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, 1, 0)), "recv=0x0 on the root rank 1");
        assertEquals(java.util.List.of(), moved(rec));

        comm.reduce(8, 0, 1, NcclDataType.FLOAT32, NcclRedOp.SUM, 3, 5);
        comm.reduceInPlace(64, 10, NcclDataType.BFLOAT16, NcclRedOp.AVG, 1, 77);
        assertEquals(java.util.List.of("reduce 8 0 1 7 0 root 3 5", "reduce 64 64 10 9 4 root 1 77"), moved(rec));
    }

    @Test
    void reduceScatterAndAllGatherRejectBadArgumentsWithoutCallingNccl() {
        RecordingCommCalls rec = new RecordingCommCalls(); // 4 ranks
        NcclComm comm = new NcclComm(0x1000, -1, rec);
        assertThrows(NullPointerException.class, () -> comm.reduceScatter(8, 8, 1, null, NcclRedOp.AVG, 0));
        assertThrows(NullPointerException.class, () -> comm.reduceScatter(8, 8, 1, NcclDataType.FLOAT32, null, 0));
        assertThrows(NullPointerException.class, () -> comm.allGather(8, 8, 1, null, 0));
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduceScatter(8, 8, -1, NcclDataType.FLOAT32, NcclRedOp.AVG, 0)), "recvCount must be >= 0: -1");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.allGather(8, 8, -1, NcclDataType.FLOAT32, 0)), "sendCount must be >= 0: -1");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduceScatter(0, 8, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, 0)), "null device buffer", "send=0x0");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduceScatter(8, 0, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, 0)), "null device buffer", "recv=0x0");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.allGather(0, 8, 1, NcclDataType.FLOAT32, 0)), "null device buffer", "send=0x0");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.allGather(8, 0, 1, NcclDataType.FLOAT32, 0)), "null device buffer", "recv=0x0");
        // Per rank the count fits; the whole buffer, 4 blocks of it, does not.
        long perRank = Long.MAX_VALUE / 4 / 4 + 1;
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.reduceScatter(8, 8, perRank, NcclDataType.FLOAT32, NcclRedOp.AVG, 0)), "over 4 ranks");
        assertMessage(assertThrows(IllegalArgumentException.class,
            () -> comm.allGather(8, 8, perRank, NcclDataType.FLOAT32, 0)), "over 4 ranks");
        assertEquals(java.util.List.of(), moved(rec));

        // NCCL's in-place forms: rank 1's block of 10 fp32 elements lies 40 bytes into the buffer.
        comm.reduceScatter(1000, 1040, 10, NcclDataType.FLOAT32, NcclRedOp.AVG, 77);
        comm.allGather(1040, 1000, 10, NcclDataType.FLOAT32, 77);
        comm.reduceScatter(0, 0, 0, NcclDataType.FLOAT16, NcclRedOp.SUM, 0);
        comm.allGather(0, 0, 0, NcclDataType.BFLOAT16, 0);
        assertEquals(java.util.List.of("reduceScatter 1000 1040 10 7 4 77", "allGather 1040 1000 10 7 77",
            "reduceScatter 0 0 0 6 0 0", "allGather 0 0 0 9 0"), moved(rec));
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
        assertThrows(IllegalStateException.class, () -> comm.broadcastInPlace(8, 1, NcclDataType.FLOAT32, 0, 0));
        assertThrows(IllegalStateException.class, () -> comm.reduceInPlace(8, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, 0, 0));
        assertThrows(IllegalStateException.class,
            () -> comm.reduceScatter(8, 8, 1, NcclDataType.FLOAT32, NcclRedOp.AVG, 0));
        assertThrows(IllegalStateException.class, () -> comm.allGather(8, 8, 1, NcclDataType.FLOAT32, 0));
        assertTrue(rec.calls.stream().noneMatch(c -> c.startsWith("broadcast") || c.startsWith("reduce")
            || c.startsWith("allGather")), rec.calls::toString);
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
