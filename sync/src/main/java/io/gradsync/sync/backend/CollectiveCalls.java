package io.gradsync.sync.backend;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.SyncStats;
import java.util.List;

/**
 * The eight collective entry points of {@link GradientSynchronizer} as the two calls every
 * synchronizer implements: {@link #call} (returns once done) and {@link #callAsync} (returns once
 * queued), each given the {@link Collective}. A broadcast's root is checked against
 * {@link #worldSize()} before either is called.
 *
 * <p>Thread-safety: as the subclass's two calls (the synchronizers serialize them).
 */
public abstract class CollectiveCalls implements GradientSynchronizer {
    /** False once a wrapper counts this synchronizer's calls itself ({@link #leaveCallCountingToWrapper}). */
    private volatile boolean countsCalls = true;
    /** The layout last counted (a replica's list is immutable: the same list, the same bytes). */
    private volatile CountedBytes lastBytes;

    private record CountedBytes(List<Gradient> gradients, long bytes) {
    }

    /**
     * For a synchronizer that wraps this one and makes several of its calls for one of its own (the
     * wire's stages, on rounded copies): from now on this one's {@link #stats()} count no calls,
     * only phases; the wrapper counts its own calls there ({@link #countCall}).
     */
    public final void leaveCallCountingToWrapper() {
        countsCalls = false;
    }

    /** Counts a finished call of {@code bytes} (one replica's gradients) in {@code stats}, unless a wrapper counts them. */
    protected final void countCall(SyncStats stats, long bytes, long nanos) {
        if (countsCalls) {
            stats.call(bytes, nanos);
        }
    }

    /** The bytes of a replica's gradients, for the stats: a model's list of gradients, counted once. */
    protected final long bytesOf(List<Replica> replicas) {
        List<Gradient> gradients = replicas.getFirst().gradients();
        CountedBytes last = lastBytes;
        if (last != null && last.gradients() == gradients) {
            return last.bytes();
        }
        long bytes = 0;
        for (Gradient g : gradients) {
            bytes += g.byteSize();
        }
        lastBytes = new CountedBytes(gradients, bytes);
        return bytes;
    }

    /** {@code op} on {@code replicas}, returning once every replica holds its result. */
    protected abstract void call(List<Replica> replicas, Collective op);

    /** {@code op} on {@code replicas}, returning once queued; the handle says when it is done. */
    protected abstract SyncHandle callAsync(List<Replica> replicas, Collective op);

    @Override
    public final void synchronize(List<Replica> replicas) {
        call(replicas, Collective.AVERAGE);
    }

    @Override
    public final SyncHandle synchronizeAsync(List<Replica> replicas) {
        return callAsync(replicas, Collective.AVERAGE);
    }

    @Override
    public final void broadcast(List<Replica> replicas, int root) {
        call(replicas, Collective.broadcast(root, worldSize()));
    }

    @Override
    public final SyncHandle broadcastAsync(List<Replica> replicas, int root) {
        return callAsync(replicas, Collective.broadcast(root, worldSize()));
    }

    @Override
    public final void reduceScatter(List<Replica> replicas) {
        call(replicas, Collective.REDUCE_SCATTER);
    }

    @Override
    public final SyncHandle reduceScatterAsync(List<Replica> replicas) {
        return callAsync(replicas, Collective.REDUCE_SCATTER);
    }

    @Override
    public final void allGather(List<Replica> replicas) {
        call(replicas, Collective.ALL_GATHER);
    }

    @Override
    public final SyncHandle allGatherAsync(List<Replica> replicas) {
        return callAsync(replicas, Collective.ALL_GATHER);
    }
}
