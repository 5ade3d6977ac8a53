package io.gradsync.sync.nccl;

/**
 * The ranks of a job could not agree on an NCCL unique id: the message says which rank saw what.
 *
 * <p>Thread-safety: immutable once thrown.
 */
public final class RendezvousException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RendezvousException(String message) {
        super(message);
    }

    public RendezvousException(String message, Throwable cause) {
        super(message, cause);
    }
}
