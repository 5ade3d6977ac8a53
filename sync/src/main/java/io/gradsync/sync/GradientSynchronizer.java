package io.gradsync.sync;

import java.util.List;

/**
 * Averages, in place, the gradients of the replicas of one model, one replica per device.
 *
 * <p>Thread-safety: a synchronizer may be shared by threads; its calls are serialized (one
 * call runs at a time, the others wait). {@link #stats()} may be read at any time.
 *
 * <p>A synchronizer is built for a fixed list of devices ({@link Synchronizers#create}). Each call
 * to {@link #synchronize} passes one replica per local device, in that order, with the same
 * gradient names, lengths and dtypes on every replica. Inputs are checked before anything moves:
 * a rejected call throws and leaves every gradient as it was. Work already queued on the devices
 * is waited for first, and when the call returns every replica holds the average.
 */
public interface GradientSynchronizer extends AutoCloseable {

    SyncBackend backend();

    /** This process's rank among the processes of its host (0 in a single process). */
    int localRank();

    /** This process's first replica's rank among all replicas. */
    int rank();

    /** Replicas over all processes (the N that gradients are averaged over). */
    int worldSize();

    /** True for the replica set that should log, checkpoint and print (global rank 0). */
    default boolean isPrimary() {
        return rank() == 0;
    }

    /** True when there is more than one replica, so averaging does something. */
    default boolean isDistributed() {
        return worldSize() > 1;
    }

    /**
     * Averages the gradients of {@code replicas} (one per local device, in device order) in place,
     * and returns when every replica holds the average. Replicas that name a stream
     * ({@link Replica#stream()}) have the average ordered after the work queued on it so far, and
     * work queued on it later runs after the average; for the others, all work queued on their
     * devices is waited for first ({@link SyncOptions#waitForCaller()}).
     *
     * @throws IllegalArgumentException for input that does not fit (nothing is modified then)
     */
    void synchronize(List<Replica> replicas);

    /**
     * As {@link #synchronize}, but returns once the work is queued, with a handle to wait on. The
     * input is checked first, as by {@link #synchronize}; later failures surface in
     * {@link SyncHandle#await()}. Calls queue behind each other: a later call may start before an
     * earlier one's handle was awaited. Backends whose average runs on the host ({@code cpu}) run
     * it on a background thread; the caller's streams wait on the device for a flag that thread
     * raises when the replicas hold the average (or the call failed).
     */
    default SyncHandle synchronizeAsync(List<Replica> replicas) {
        synchronize(replicas);
        return SyncHandle.done();
    }

    /** Time spent so far, per call and per phase; for logs and benchmarks. */
    SyncStats stats();

    /** Returns once every replica, in every process, has reached this point. */
    void barrier();

    /** Frees staging memory, streams and communicators. Later calls throw {@link IllegalStateException}. */
    @Override
    void close();
}
