package io.gradsync.sync.backend.single;

import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.backend.LocalSynchronizer;
import io.gradsync.tasks.device.Device;
import java.util.List;

/** One replica: the average of one is itself, so nothing moves. Inputs are still checked. */
final class SingleSynchronizer extends LocalSynchronizer<Device> {

    SingleSynchronizer(Device device) {
        super(List.of(device), false); // it never touches the devices, so it has nothing to wait for
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.SINGLE;
    }

    @Override
    protected io.gradsync.tasks.device.DeviceEvent[] average(List<Replica> replicas) {
        throw new AssertionError("one replica is never averaged");
    }

    @Override
    protected void release() {
        // holds nothing
    }
}
