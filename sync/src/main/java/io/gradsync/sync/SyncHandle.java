package io.gradsync.sync;

/**
 * A synchronization in flight, from {@link GradientSynchronizer#synchronizeAsync}: the call
 * returned once the work was queued; this says when every replica holds the average.
 *
 * <p>Replicas that named a stream ({@link Replica#stream()}) need no {@link #await()}: work queued
 * on that stream after the call already runs after the average. Others must await before they
 * read or write the gradients again.
 *
 * <p>Thread-safety: {@link #await()} and {@link #isDone()} may be called from any thread, any
 * number of times.
 */
public interface SyncHandle {

    /**
     * Blocks until every replica holds the average.
     *
     * @throws SyncFailedException when the work failed; it names the replica and device
     * @throws SyncTimeoutException (nccl) where another rank did not take part within the
     *         timeout, as the synchronous form throws it
     * @throws IllegalStateException when the waiting thread is interrupted (its interrupt status
     *         kept): the call goes on, and a later {@code await()} waits for it again
     */
    void await();

    /** True once the work has finished (or failed: {@link #await()} then throws). Does not block. */
    boolean isDone();

    /** A handle for work that finished before the call returned. */
    static SyncHandle done() {
        return Done.INSTANCE;
    }

    /** The finished handle. */
    enum Done implements SyncHandle {
        INSTANCE;

        @Override
        public void await() {
        }

        @Override
        public boolean isDone() {
            return true;
        }
    }
}
