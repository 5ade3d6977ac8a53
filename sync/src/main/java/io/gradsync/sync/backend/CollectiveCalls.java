package io.gradsync.sync.backend;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncHandle;
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
