package io.gradsync.sync.backend;

import io.gradsync.sync.SyncFailedException;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.SyncTimeoutException;

/**
 * Whether the failure of a synchronizer's last call reached its caller, so that {@code close()}
 * reports it exactly once: a failed device reports its failure again on every later wait (a JVM
 * stream, a CUDA context), which close would otherwise throw a second time; and a failed
 * asynchronous call whose handle was dropped must not pass unnoticed. Calls are numbered as they
 * are accepted; a failure thrown to the caller, or by a handle's await, marks its call reported.
 *
 * <p>Thread-safety: {@link #begin} and {@link #asynchronous} from the synchronizer's serialized
 * calls; a handle's await may mark its call from any thread.
 */
public final class CallFailures {
    private long calls;
    private volatile long reportedCall = -1;
    private SyncHandle lastAsync;
    private long lastAsyncCall = -1;

    /** A call accepted (its input checked): its number. */
    public synchronized long begin() {
        return ++calls;
    }

    /**
     * {@code e}, thrown to the caller by call {@code call}: noted as reported unless it refused the
     * input before anything moved ({@link IllegalArgumentException}) or is an interrupt (the call
     * goes on).
     */
    public RuntimeException thrown(long call, RuntimeException e) {
        if (!(e instanceof IllegalArgumentException) && !interrupted(e)) {
            note(call);
        }
        return e;
    }

    /**
     * The handle of asynchronous call {@code call}: {@code h}, noting a failure its await throws
     * ({@link SyncFailedException}, {@link SyncTimeoutException}; an interrupted wait is not the
     * call's failure); kept as the last asynchronous call's for {@link #unreported}.
     */
    public synchronized SyncHandle asynchronous(long call, SyncHandle h) {
        SyncHandle noting = new SyncHandle() {
            @Override
            public void await() {
                try {
                    h.await();
                } catch (SyncFailedException | SyncTimeoutException e) {
                    note(call);
                    throw e;
                }
            }

            @Override
            public boolean isDone() {
                return h.isDone();
            }
        };
        lastAsync = noting;
        lastAsyncCall = call;
        return noting;
    }

    /**
     * For {@code close()}, before freeing anything: where the last call was asynchronous and no
     * caller heard of a failure of it, waits for it and returns its failure (null if it succeeded
     * or was heard of).
     */
    public synchronized RuntimeException unreported() {
        if (lastAsyncCall != calls || lastReported()) {
            return null;
        }
        try {
            lastAsync.await();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** Whether the last call's failure reached the caller: close then drops what the devices report again. */
    public synchronized boolean lastReported() {
        return reportedCall == calls;
    }

    private void note(long call) {
        reportedCall = Math.max(reportedCall, call);
    }

    /** Whether {@code e} comes of an interrupt (the thread's flag set, or an {@link InterruptedException} among its causes). */
    public static boolean interrupted(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException) {
                return true;
            }
        }
        return Thread.currentThread().isInterrupted();
    }
}
