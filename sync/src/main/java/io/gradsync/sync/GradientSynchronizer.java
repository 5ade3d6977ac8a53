package io.gradsync.sync;

import java.util.List;

/**
 * Averages, in place, the gradients of the replicas of one model, one replica per device; and
 * the other collectives of data-parallel training on the same replicas: {@link #broadcast} (one
 * replica's values to all), {@link #reduceScatter} and {@link #allGather} (sharded training).
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
     * @throws SyncFailedException where the call fails once accepted (a device's failed work, the
     *         caller's work queued before it included), naming the replica, as the asynchronous form's
     *         {@link SyncHandle#await()} does; the gradients are then undefined
     * @throws SyncTimeoutException (nccl) where another rank did not take part within the timeout
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

    /**
     * Makes every replica's gradients the root replica's, bit for bit: what a run does at start-up
     * so that every replica begins from the same weights and optimizer state. Ordering against the
     * caller's work, and the checks, are those of {@link #synchronize}.
     *
     * @param root the global index of the replica whose gradients every replica gets: its place in
     *             {@code replicas} in one process, its rank with one process per GPU
     * @throws IllegalArgumentException for a root outside {@code [0, worldSize())}, or input that
     *                                  does not fit (nothing is modified then)
     */
    void broadcast(List<Replica> replicas, int root);

    /** As {@link #broadcast}, returning once the work is queued, as {@link #synchronizeAsync} does. */
    default SyncHandle broadcastAsync(List<Replica> replicas, int root) {
        broadcast(replicas, root);
        return SyncHandle.done();
    }

    /**
     * Sharded training's first half, in place: for every gradient of {@code count} elements, the
     * replica of global index {@code g} ends with the average, the same bits {@link #synchronize}
     * gives, on its shard {@link Shards#range Shards.range(count, worldSize(), g)}; every element
     * outside its shard is left exactly as it was. The global index is the replica's place in
     * {@code replicas} in one process, its rank with one process per GPU ({@code rank() + r}).
     *
     * @throws IllegalArgumentException for input that does not fit (nothing is modified then)
     */
    void reduceScatter(List<Replica> replicas);

    /** As {@link #reduceScatter}, returning once the work is queued, as {@link #synchronizeAsync} does. */
    default SyncHandle reduceScatterAsync(List<Replica> replicas) {
        reduceScatter(replicas);
        return SyncHandle.done();
    }

    /**
     * Sharded training's second half, in place: for every gradient, every replica ends with shard
     * {@code g} ({@link Shards#range}) copied bit for bit from the replica of global index
     * {@code g}, for every {@code g}; each replica's own shard is left as it was.
     *
     * @throws IllegalArgumentException for input that does not fit (nothing is modified then)
     */
    void allGather(List<Replica> replicas);

    /** As {@link #allGather}, returning once the work is queued, as {@link #synchronizeAsync} does. */
    default SyncHandle allGatherAsync(List<Replica> replicas) {
        allGather(replicas);
        return SyncHandle.done();
    }

    /** Time spent so far, per call and per phase; for logs and benchmarks. */
    SyncStats stats();

    /** Returns once every replica, in every process, has reached this point. */
    void barrier();

    /**
     * Frees staging memory, streams and communicators. Later calls throw
     * {@link IllegalStateException}. Every backend waits for its last call first ({@code nccl}
     * within its timeout, as its other rank may never come): a failure of it that neither the call
     * nor {@link SyncHandle#await()} reported (an asynchronous call whose handle was dropped) is
     * thrown here; one already reported is not thrown again.
     */
    @Override
    void close();
}
