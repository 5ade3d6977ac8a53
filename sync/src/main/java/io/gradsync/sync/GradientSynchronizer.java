package io.gradsync.sync;

import java.util.List;

/**
 * Averages, in place, the gradients of the replicas of one model, one replica per device.
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

    /** Averages the gradients of {@code replicas} (one per local device, in device order) in place. */
    void synchronize(List<Replica> replicas);

    /** Time spent so far, per call and per phase; for logs and benchmarks. */
    SyncStats stats();

    /** Returns once every replica, in every process, has reached this point. */
    void barrier();

    /** Frees staging memory, streams and communicators. Later calls throw {@link IllegalStateException}. */
    @Override
    void close();
}
