package io.gradsync.sync;

/**
 * A collective, barrier or rendezvous did not finish within {@link SyncOptions#timeout()}: a rank
 * died, hung or never arrived. The synchronizer has aborted its communicators and is unusable;
 * close it (and, in a multi-process job, usually end the process).
 *
 * <p>Thread-safety: immutable once thrown.
 */
public final class SyncTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SyncTimeoutException(String message) {
        super(message);
    }

    public SyncTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
