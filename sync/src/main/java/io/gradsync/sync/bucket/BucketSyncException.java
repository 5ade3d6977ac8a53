package io.gradsync.sync.bucket;

/**
 * A bucket's collective failed; the cause is the synchronizer's exception.
 *
 * <p>Thread-safety: immutable once thrown.
 */
public final class BucketSyncException extends RuntimeException {
    public BucketSyncException(String message, Throwable cause) {
        super(message, cause);
    }
}
