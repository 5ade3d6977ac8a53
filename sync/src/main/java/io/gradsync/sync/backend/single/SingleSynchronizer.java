package io.gradsync.sync.backend.single;

import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.backend.LocalSynchronizer;
import io.gradsync.tasks.device.Device;
import java.util.List;

/**
 * One replica: the average of one is itself, and so is its shard, its gather and its broadcast, so
 * nothing moves. Inputs (and a broadcast's root) are still checked.
 */
final class SingleSynchronizer extends LocalSynchronizer<Device> {

    SingleSynchronizer(Device device) {
        super(List.of(device), false); // it never touches the devices, so it has nothing to wait for
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.SINGLE;
    }

    @Override
    protected io.gradsync.tasks.device.DeviceEvent[] perform(List<Replica> replicas, io.gradsync.sync.backend.Collective op) {
        throw new AssertionError("one replica: every collective leaves it as it is");
    }

    @Override
    protected void release() {
        // holds nothing
    }
}
