package io.gradsync.sync.backend.nccl;

import io.gradsync.sync.SyncTimeoutException;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuStreamQuery;

import io.gradsync.nccl.NcclComm;
import io.gradsync.nccl.NcclResult;
import io.gradsync.tasks.device.Device;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import jcuda.CudaException;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

/**
 * The nccl backend's waiting, timeouts and abort: after a launch ({@link #afterLaunch}) it turns a
 * watchdog abort or an enqueue failure into the caller's exception; while waiting ({@link #await})
 * it polls every stream (spinning, then parking), reads the communicators' asynchronous errors, and
 * at the deadline aborts; every failure aborts all communicators once and leaves the reason
 * ({@link #broken}) that makes the synchronizer unusable. The {@link LaunchWatchdog} that breaks a
 * blocked enqueue is armed here ({@link #arm}) and runs the same abort.
 *
 * <p>Thread-safety: {@link #arm}, {@link #afterLaunch} and {@link #await} run under the
 * synchronizer's lock; the abort may also run on the watchdog's thread, so it happens once
 * ({@link #aborted} is atomic) and {@link #broken} is volatile, read without the lock.
 */
final class NcclWatch {
    /** Spin on the streams this long (the latency that matters is at small sizes), then park. */
    private static final long SPIN_NANOS = 10_000_000L;
    private static final long PARK_NANOS = 20_000L;
    /** NCCL's async error is read this often while waiting. */
    private static final long ERROR_POLL_NANOS = 1_000_000L;
    private static final String NOT_READY_TEXT = CUresult.stringFor(CUresult.CUDA_ERROR_NOT_READY);

    private final NcclComms nccl;
    private final long timeoutNanos;
    private final boolean[] done;
    private final LaunchWatchdog watchdog;
    private final AtomicBoolean aborted = new AtomicBoolean();
    private volatile String broken;

    /** Starts the watchdog's thread (stopped by {@link #close}). */
    NcclWatch(NcclComms nccl, long timeoutNanos) {
        this.nccl = nccl;
        this.timeoutNanos = timeoutNanos;
        done = new boolean[nccl.devices.size()];
        watchdog = new LaunchWatchdog("gradsync-nccl-watchdog-rank" + nccl.rank, this::abortAll);
    }

    /** Why the synchronizer is unusable (an earlier failure, the communicators aborted), or null. */
    String broken() {
        return broken;
    }

    /** Whether the communicators were aborted (by a failure or the watchdog). */
    boolean aborted() {
        return aborted.get();
    }

    /** Before an enqueue that may block: the watchdog aborts if it has not returned by {@code deadline}. */
    void arm(long deadline) {
        watchdog.arm(deadline);
    }

    /** Stops the watchdog's thread. */
    void close() {
        watchdog.close();
    }

    /** Turns a watchdog abort or an NCCL failure during enqueue into the exception the caller sees. */
    void afterLaunch(RuntimeException failure, String what, long start) {
        if (!watchdog.disarm()) {
            SyncTimeoutException e = timeout(what, start, "enqueueing it blocked");
            if (failure != null) {
                e.addSuppressed(failure);
            }
            throw e;
        }
        if (failure != null) {
            String message = "nccl: " + where() + ": enqueueing " + what + " failed: " + failure.getMessage()
                    + "; communicators aborted";
            abortAll();
            broken = message;
            throw new IllegalStateException(message, failure);
        }
    }

    /** Polls every stream until done; reads NCCL's async errors meanwhile; aborts at the deadline. */
    void await(String what, long start, long deadline) {
        int n = nccl.streams.length;
        Arrays.fill(done, false);
        int left = n;
        long now = System.nanoTime();
        long nextErrorPoll = now + ERROR_POLL_NANOS;
        long spinUntil = now + SPIN_NANOS;
        while (true) {
            for (int r = 0; r < n; r++) {
                if (done[r]) {
                    continue;
                }
                if (n > 1) {
                    cuCtxSetCurrent(nccl.contexts[r]); // a stream is queried under its own device's context
                }
                int rc = query(nccl.streamHandles[r]);
                if (rc == CUresult.CUDA_SUCCESS) {
                    done[r] = true;
                    left--;
                } else if (rc != CUresult.CUDA_ERROR_NOT_READY) {
                    String message = "nccl: " + what + " failed on " + nccl.devices.get(r).id() + ": cuStreamQuery: "
                            + CUresult.stringFor(rc) + "; communicators aborted";
                    abortAll();
                    broken = message;
                    throw new IllegalStateException(message);
                }
            }
            if (left == 0) {
                return;
            }
            now = System.nanoTime();
            if (now - nextErrorPoll >= 0) {
                checkAsyncErrors(what);
                nextErrorPoll = now + ERROR_POLL_NANOS;
            }
            if (now - deadline >= 0) {
                abortAll();
                throw timeout(what, start, "not finished on " + unfinished());
            }
            if (now - spinUntil < 0) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
    }

    /**
     * {@code cuStreamQuery}'s result code. JCuda throws instead of returning codes when some code in
     * the process enabled its exceptions (a global switch), so that case is mapped back to the code.
     */
    private static int query(CUstream stream) {
        try {
            return cuStreamQuery(stream);
        } catch (CudaException e) {
            return NOT_READY_TEXT.equals(e.getMessage()) ? CUresult.CUDA_ERROR_NOT_READY : CUresult.CUDA_ERROR_UNKNOWN;
        }
    }

    private void checkAsyncErrors(String what) {
        for (int r = 0; r < nccl.comms.size(); r++) {
            NcclResult result = nccl.comms.get(r).asyncError();
            if (result != NcclResult.SUCCESS && result != NcclResult.IN_PROGRESS) {
                String last = nccl.comms.get(r).lastError();
                String message = "nccl: " + what + ": rank " + (nccl.rank + r) + " (" + nccl.devices.get(r).id() + ") reported "
                        + result + (last.isBlank() ? "" : " (" + last.strip() + ")")
                        + " (a peer rank died or its network failed?); communicators aborted";
                abortAll();
                broken = message;
                throw new IllegalStateException(message);
            }
        }
    }

    private String unfinished() {
        List<String> names = new ArrayList<>();
        for (int r = 0; r < done.length; r++) {
            if (!done[r]) {
                names.add("rank " + (nccl.rank + r) + " (" + nccl.devices.get(r).id() + ")");
            }
        }
        return String.join(", ", names);
    }

    private SyncTimeoutException timeout(String what, long start, String detail) {
        String message = String.format(Locale.ROOT,
                "nccl: %s did not complete within the %.1f s timeout (%.1f s elapsed; %s) on %s of %d ranks;"
                        + " communicators aborted: a rank died, hangs or never arrived",
                what, timeoutNanos / 1e9, (System.nanoTime() - start) / 1e9, detail, where(), nccl.worldSize);
        broken = message;
        return new SyncTimeoutException(message);
    }

    private String where() {
        if (!nccl.multiProcess) {
            return "this process's GPUs " + String.join(", ", nccl.devices.stream().map(Device::id).toList());
        }
        return "rank " + nccl.rank + " (local rank " + nccl.localRank + ", " + nccl.devices.getFirst().id() + ")";
    }

    /** Frees the communicators at once, unblocking any kernel or call stuck on a dead peer. Runs once. */
    private void abortAll() {
        if (!aborted.compareAndSet(false, true)) {
            return;
        }
        if (broken == null) {
            broken = "nccl: communicators aborted after a timeout on " + where();
        }
        for (NcclComm c : nccl.comms) {
            try {
                c.abort();
            } catch (RuntimeException e) {
                // aborting is best effort; the error that led here is what the caller needs
            }
        }
    }
}
