package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import java.util.List;

/**
 * What the single-process synchronizers share: one replica per local device, ranks all 0, the
 * input check before anything moves, per-call stats, and close-once. Subclasses implement
 * {@link #average} (called only with checked input and more than one replica) and
 * {@link #release}.
 *
 * @param <D> the device type the backend works on
 */
abstract class LocalSynchronizer<D extends Device> implements GradientSynchronizer {
    protected final List<D> devices;
    protected final SyncStats stats = new SyncStats();
    private volatile boolean closed;
    private final boolean waitForCaller;

    /** @param waitForCaller {@link SyncOptions#waitForCaller()} */
    protected LocalSynchronizer(List<? extends D> devices, boolean waitForCaller) {
        this.devices = List.copyOf(devices);
        this.waitForCaller = waitForCaller;
    }

    /** The caller's work on the gradients comes first: waits for everything queued on the devices (unless told not to). */
    protected final void awaitCallerWork() {
        if (waitForCaller) {
            for (D d : devices) {
                d.synchronize();
            }
        }
    }

    @Override
    public final int localRank() {
        return 0;
    }

    @Override
    public final int rank() {
        return 0;
    }

    @Override
    public final int worldSize() {
        return devices.size();
    }

    @Override
    public final SyncStats stats() {
        return stats;
    }

    @Override
    public final synchronized void synchronize(List<Replica> replicas) {
        checkOpen();
        long t0 = System.nanoTime();
        ReplicaCheck.check(replicas, devices);
        long bytes = 0;
        for (Gradient g : replicas.getFirst().gradients()) {
            bytes += g.byteSize();
        }
        if (devices.size() > 1) {
            average(replicas);
        }
        stats.call(bytes, System.nanoTime() - t0);
    }

    /**
     * True during a call made by {@link #synchronizeCollecting}: backends that fuse the sums of
     * squares into their averaging pass ({@link FusedSumOfSquares}) collect them then.
     */
    protected boolean collect;

    /**
     * For {@link FusedSumOfSquares} backends: one call with {@link #collect} set, then the per-gradient
     * sums {@code read} takes from what the call left.
     */
    protected final synchronized double[] synchronizeCollecting(List<Replica> replicas,
            java.util.function.Function<List<Replica>, double[]> read) {
        if (devices.size() < 2) {
            throw new UnsupportedOperationException("one replica: nothing is averaged, so there is no pass to fuse the sum into");
        }
        collect = true;
        try {
            synchronize(replicas);
            return read.apply(replicas);
        } finally {
            collect = false;
        }
    }

    /** Averages checked replicas (one per device, at least two) in place. */
    protected abstract void average(List<Replica> replicas);

    /** Single process: every replica is here, so waiting for the devices is the barrier. */
    @Override
    public void barrier() {
        checkOpen();
        for (Device d : devices) {
            d.synchronize();
        }
    }

    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException(backend().label() + " synchronizer is closed");
        }
    }

    @Override
    public final synchronized void close() {
        if (!closed) {
            closed = true;
            release();
        }
    }

    /** Frees streams, events and staging memory; called once. */
    protected abstract void release();
}
