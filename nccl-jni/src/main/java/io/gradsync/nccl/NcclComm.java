package io.gradsync.nccl;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One rank's NCCL communicator ({@code ncclComm_t}). Made by {@link Nccl#initAll} or
 * {@link Nccl#initRank}; {@link #close()} destroys it.
 *
 * <p>Buffers and streams are raw CUDA pointers passed as {@code long}: device addresses
 * ({@code CUdeviceptr}) on this communicator's device, and a {@code CUstream} /
 * {@code cudaStream_t} of that device, 0 meaning the default stream. NCCL only enqueues
 * work on the stream: the result is ready once the stream is synchronised, and the buffers
 * must stay allocated until then. Arguments are checked here before NCCL sees them, but a
 * pointer's validity cannot be: a wrong address is reported by CUDA, asynchronously.
 *
 * <p>Like NCCL, a communicator takes calls from one thread at a time. Any thread may call
 * {@link #abort()} to break a call that hangs (a peer that died, say); {@link #close()}
 * waits for calls in flight to return. After either, every call throws
 * {@link IllegalStateException}. Not closing a communicator leaks NCCL's threads and GPU memory.
 */
public final class NcclComm implements AutoCloseable {
    /** Set in {@link #state} once closed; the low bits count calls in flight. */
    private static final int CLOSED = 1 << 30;

    private final long handle;
    private final int boundDevice;
    private final CommCalls calls;
    private final AtomicInteger state = new AtomicInteger();
    /** {@link #ranks()}: 0 until asked; a racy but idempotent cache of an immutable value. */
    private volatile int ranks;

    /**
     * @param handle      the {@code ncclComm_t}
     * @param boundDevice device whose primary context the shim retained for this comm, or -1
     */
    NcclComm(long handle, int boundDevice, CommCalls calls) {
        if (handle == 0) {
            throw new IllegalArgumentException("null ncclComm_t");
        }
        this.handle = handle;
        this.boundDevice = boundDevice;
        this.calls = calls;
    }

    /**
     * All-reduce of {@code count} elements from {@code sendBuffer} into {@code recvBuffer}
     * (the same address for in place) on {@code stream}. Every rank must make the same call;
     * in one thread driving several ranks, wrap the calls in {@link Nccl#groupStart()} /
     * {@link Nccl#groupEnd()}.
     *
     * @param sendBuffer device address of the input, not 0 unless count is 0
     * @param recvBuffer device address of the output, not 0 unless count is 0
     * @param count      elements (not bytes), &gt;= 0
     * @param type       element type
     * @param op         reduction; {@link NcclRedOp#AVG} divides the sum by the rank count
     * @param stream     {@code CUstream} of this communicator's device, 0 for the default stream
     */
    public void allReduce(long sendBuffer, long recvBuffer, long count, NcclDataType type, NcclRedOp op, long stream) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(op, "op");
        checkCount("count", count, type);
        if (count > 0 && (sendBuffer == 0 || recvBuffer == 0)) {
            throw nullBuffer(sendBuffer, recvBuffer);
        }
        enter();
        try {
            calls.allReduce(handle, sendBuffer, recvBuffer, count, type.ncclValue(), op.ncclValue(), stream);
        } finally {
            exit();
        }
    }

    /** In-place all-reduce: {@code allReduce(buffer, buffer, count, type, op, stream)}. */
    public void allReduceInPlace(long buffer, long count, NcclDataType type, NcclRedOp op, long stream) {
        allReduce(buffer, buffer, count, type, op, stream);
    }

    /**
     * Broadcast ({@code ncclBroadcast}): {@code count} elements of {@code sendBuffer} on rank
     * {@code root} are copied into every rank's {@code recvBuffer} (the same address for in place).
     * Every rank must make the same call, with the same root; grouping as for {@link #allReduce}.
     *
     * @param sendBuffer device address of the input; read on rank {@code root} only, so it may be 0 elsewhere
     * @param recvBuffer device address of the output, not 0 unless count is 0
     * @param count      elements (not bytes), &gt;= 0
     * @param root       the rank (not the device) whose data every rank gets, in {@code [0, count())}
     */
    public void broadcast(long sendBuffer, long recvBuffer, long count, NcclDataType type, int root, long stream) {
        Objects.requireNonNull(type, "type");
        checkCount("count", count, type);
        checkRootSign(root);
        if (count > 0 && recvBuffer == 0) {
            throw nullBuffer(sendBuffer, recvBuffer);
        }
        enter();
        try {
            checkRoot(root);
            if (count > 0 && sendBuffer == 0 && calls.userRank(handle) == root) {
                throw new IllegalArgumentException("null device buffer: send=0x0 on the root rank " + root
                    + ", whose data is broadcast");
            }
            calls.broadcast(handle, sendBuffer, recvBuffer, count, type.ncclValue(), root, stream);
        } finally {
            exit();
        }
    }

    /** In-place broadcast: {@code broadcast(buffer, buffer, count, type, root, stream)}. */
    public void broadcastInPlace(long buffer, long count, NcclDataType type, int root, long stream) {
        broadcast(buffer, buffer, count, type, root, stream);
    }

    /**
     * Reduce ({@code ncclReduce}): the reduction of every rank's {@code count} elements of
     * {@code sendBuffer} lands in {@code recvBuffer} on rank {@code root} only; NCCL does not write
     * the other ranks' {@code recvBuffer} (nccl.h: it may be NULL there). In place where the two are
     * the same address. Every rank must make the same call, with the same root.
     *
     * @param sendBuffer device address of the input, not 0 unless count is 0
     * @param recvBuffer device address of the output on the root; may be 0 on the other ranks
     * @param count      elements (not bytes), &gt;= 0
     * @param op         reduction; {@link NcclRedOp#AVG} divides the sum by the rank count
     * @param root       the rank (not the device) that gets the result, in {@code [0, count())}
     */
    public void reduce(long sendBuffer, long recvBuffer, long count, NcclDataType type, NcclRedOp op, int root,
            long stream) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(op, "op");
        checkCount("count", count, type);
        checkRootSign(root);
        if (count > 0 && sendBuffer == 0) {
            throw nullBuffer(sendBuffer, recvBuffer);
        }
        enter();
        try {
            checkRoot(root);
            if (count > 0 && recvBuffer == 0 && calls.userRank(handle) == root) {
                throw new IllegalArgumentException("null device buffer: recv=0x0 on the root rank " + root
                    + ", which receives the result");
            }
            calls.reduce(handle, sendBuffer, recvBuffer, count, type.ncclValue(), op.ncclValue(), root, stream);
        } finally {
            exit();
        }
    }

    /** In-place reduce: {@code reduce(buffer, buffer, count, type, op, root, stream)}. */
    public void reduceInPlace(long buffer, long count, NcclDataType type, NcclRedOp op, int root, long stream) {
        reduce(buffer, buffer, count, type, op, root, stream);
    }

    /**
     * Reduce-scatter ({@code ncclReduceScatter}): {@code sendBuffer} holds {@code recvCount * count()}
     * elements; rank {@code i} receives the reduction of block {@code i} (elements
     * {@code [i * recvCount, (i + 1) * recvCount)}) in {@code recvBuffer}. In place (NCCL's form) where
     * {@code recvBuffer == sendBuffer + rank * recvCount * type.byteSize()}; the rest of the send
     * buffer is only read.
     *
     * @param sendBuffer device address of the input, {@code recvCount * count()} elements, not 0 unless recvCount is 0
     * @param recvBuffer device address of this rank's {@code recvCount} elements, not 0 unless recvCount is 0
     * @param recvCount  elements each rank receives (not bytes), &gt;= 0
     */
    public void reduceScatter(long sendBuffer, long recvBuffer, long recvCount, NcclDataType type, NcclRedOp op,
            long stream) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(op, "op");
        checkCount("recvCount", recvCount, type);
        if (recvCount > 0 && (sendBuffer == 0 || recvBuffer == 0)) {
            throw nullBuffer(sendBuffer, recvBuffer);
        }
        enter();
        try {
            checkTotal("recvCount", recvCount, type);
            calls.reduceScatter(handle, sendBuffer, recvBuffer, recvCount, type.ncclValue(), op.ncclValue(), stream);
        } finally {
            exit();
        }
    }

    /**
     * All-gather ({@code ncclAllGather}): every rank's {@code sendCount} elements of
     * {@code sendBuffer} are copied to block {@code i} (elements {@code [i * sendCount, (i + 1) * sendCount)},
     * {@code i} the sending rank) of every rank's {@code recvBuffer}. In place (NCCL's form) where
     * {@code sendBuffer == recvBuffer + rank * sendCount * type.byteSize()}.
     *
     * @param sendBuffer device address of this rank's {@code sendCount} elements, not 0 unless sendCount is 0
     * @param recvBuffer device address of the output, {@code sendCount * count()} elements, not 0 unless sendCount is 0
     * @param sendCount  elements each rank sends (not bytes), &gt;= 0
     */
    public void allGather(long sendBuffer, long recvBuffer, long sendCount, NcclDataType type, long stream) {
        Objects.requireNonNull(type, "type");
        checkCount("sendCount", sendCount, type);
        if (sendCount > 0 && (sendBuffer == 0 || recvBuffer == 0)) {
            throw nullBuffer(sendBuffer, recvBuffer);
        }
        enter();
        try {
            checkTotal("sendCount", sendCount, type);
            calls.allGather(handle, sendBuffer, recvBuffer, sendCount, type.ncclValue(), stream);
        } finally {
            exit();
        }
    }

    private static void checkCount(String name, long count, NcclDataType type) {
        if (count < 0) {
            throw new IllegalArgumentException(name + " must be >= 0: " + count);
        }
        if (count > Long.MAX_VALUE / type.byteSize()) {
            throw new IllegalArgumentException(name + " too large for " + type + ": " + count);
        }
    }

    private static IllegalArgumentException nullBuffer(long sendBuffer, long recvBuffer) {
        return new IllegalArgumentException("null device buffer: send=0x" + Long.toHexString(sendBuffer)
            + " recv=0x" + Long.toHexString(recvBuffer));
    }

    private static void checkRootSign(int root) {
        if (root < 0) {
            throw new IllegalArgumentException("root must be a rank, >= 0: " + root);
        }
    }

    /** Inside enter(): the rank count is asked of NCCL once. */
    private void checkRoot(int root) {
        int n = ranks();
        if (root >= n) {
            throw new IllegalArgumentException("root " + root + " is not a rank of this communicator: its ranks are 0.."
                + (n - 1));
        }
    }

    /** Inside enter(): the whole buffer of a reduce-scatter or all-gather, count() blocks, must be addressable. */
    private void checkTotal(String name, long perRank, NcclDataType type) {
        int n = ranks();
        if (perRank > Long.MAX_VALUE / type.byteSize() / n) {
            throw new IllegalArgumentException(name + " too large for " + type + " over " + n + " ranks: " + perRank);
        }
    }

    /** ncclCommCount, cached: a communicator's size never changes. Call inside enter(). */
    private int ranks() {
        int n = ranks;
        if (n == 0) {
            n = calls.count(handle);
            ranks = n;
        }
        return n;
    }

    /** Number of ranks ({@code ncclCommCount}, asked once: it never changes). */
    public int count() {
        enter();
        try {
            return ranks();
        } finally {
            exit();
        }
    }

    /** CUDA device ordinal of this rank ({@code ncclCommCuDevice}). */
    public int cuDevice() {
        enter();
        try {
            return calls.cuDevice(handle);
        } finally {
            exit();
        }
    }

    /** This rank ({@code ncclCommUserRank}). */
    public int userRank() {
        enter();
        try {
            return calls.userRank(handle);
        } finally {
            exit();
        }
    }

    /**
     * NCCL's asynchronous error state ({@code ncclCommGetAsyncError}): {@link NcclResult#SUCCESS}
     * while healthy. A watchdog polls this and calls {@link #abort()} on an error.
     */
    public NcclResult asyncError() {
        enter();
        try {
            return NcclResult.fromCode(calls.asyncError(handle));
        } finally {
            exit();
        }
    }

    /** Throws {@link NcclException} where {@link #asyncError()} reports an error. */
    public void checkAsyncError() {
        enter();
        try {
            int code = calls.asyncError(handle);
            if (code != NcclResult.SUCCESS.code() && code != NcclResult.IN_PROGRESS.code()) {
                String last = calls.lastError(handle);
                throw new NcclException("ncclCommGetAsyncError", code, Nccl.errorString(code), last);
            }
        } finally {
            exit();
        }
    }

    /** NCCL's last error text ({@code ncclGetLastError}); may be empty or relate to an earlier call. */
    public String lastError() {
        enter();
        try {
            String last = calls.lastError(handle);
            return last == null ? "" : last;
        } finally {
            exit();
        }
    }

    /**
     * Flushes the communicator's outstanding work and releases what it shares with peers
     * ({@code ncclCommFinalize}, NCCL 2.14 and later); {@link #close()} must still follow. One
     * thread finalizing several communicators must do so inside a group.
     */
    public void finalizeComm() {
        enter();
        try {
            calls.finalizeComm(handle);
        } finally {
            exit();
        }
    }

    /**
     * Frees the communicator at once and aborts its work on the GPU ({@code ncclCommAbort}).
     * Meant for error paths; it may be called from another thread while a call hangs, but no
     * new call may start concurrently with it. Does nothing if already closed.
     */
    public void abort() {
        if (markClosed()) {
            // No wait for calls in flight: unblocking them is the point of abort.
            calls.abort(handle, boundDevice);
        }
    }

    /**
     * Destroys the communicator ({@code ncclCommDestroy}) after calls in flight have returned.
     * Idempotent. If NCCL reports an error the communicator is still considered closed.
     */
    @Override
    public void close() {
        if (markClosed()) {
            // Calls in flight only enqueue work, so this wait is short; a hung one needs abort().
            for (int spins = 0; (state.get() & ~CLOSED) != 0; spins++) {
                if (spins < 1_000) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(100_000L);
                }
            }
            calls.destroy(handle, boundDevice);
        }
    }

    /** True once {@link #close()} or {@link #abort()} was called. */
    public boolean isClosed() {
        return (state.get() & CLOSED) != 0;
    }

    @Override
    public String toString() {
        return "NcclComm[0x" + Long.toHexString(handle) + (isClosed() ? ", closed]" : "]");
    }

    private void enter() {
        for (;;) {
            int s = state.get();
            if ((s & CLOSED) != 0) {
                throw new IllegalStateException("NCCL communicator is closed");
            }
            if (state.compareAndSet(s, s + 1)) {
                return;
            }
        }
    }

    private void exit() {
        state.decrementAndGet();
    }

    /** Returns true for the one caller that closes. */
    private boolean markClosed() {
        for (;;) {
            int s = state.get();
            if ((s & CLOSED) != 0) {
                return false;
            }
            if (state.compareAndSet(s, s | CLOSED)) {
                return true;
            }
        }
    }
}
