package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import java.util.List;

/** One replica: the average of one is itself, so nothing moves. Inputs are still checked. */
final class SingleSynchronizer implements GradientSynchronizer {
    private final List<Device> devices;
    private final SyncStats stats = new SyncStats();
    private volatile boolean closed;

    SingleSynchronizer(Device device) {
        this.devices = List.of(device);
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.SINGLE;
    }

    @Override
    public int localRank() {
        return 0;
    }

    @Override
    public int rank() {
        return 0;
    }

    @Override
    public int worldSize() {
        return 1;
    }

    @Override
    public void synchronize(List<Replica> replicas) {
        if (closed) {
            throw new IllegalStateException("single synchronizer is closed");
        }
        long t0 = System.nanoTime();
        ReplicaCheck.check(replicas, devices);
        stats.call(replicas.getFirst().gradients().stream().mapToLong(Gradient::byteSize).sum(), System.nanoTime() - t0);
    }

    @Override
    public SyncStats stats() {
        return stats;
    }

    @Override
    public void barrier() {
        if (closed) {
            throw new IllegalStateException("single synchronizer is closed");
        }
    }

    @Override
    public void close() {
        closed = true;
    }
}
