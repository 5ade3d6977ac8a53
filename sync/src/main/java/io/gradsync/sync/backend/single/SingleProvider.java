package io.gradsync.sync.backend.single;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.List;

/** {@code single}: one replica, nothing moves; {@code auto}'s choice for one device. */
public final class SingleProvider implements BackendProvider {
    @Override
    public SyncBackend backend() {
        return SyncBackend.SINGLE;
    }

    @Override
    public DeviceRuntime runtime() {
        return null;
    }

    @Override
    public int autoRank() {
        return 0;
    }

    @Override
    public String autoRefusal(List<? extends Device> devices, AutoContext context) {
        return devices.size() == 1 ? null : "takes one device, got " + devices.size();
    }

    @Override
    public GradientSynchronizer create(List<? extends Device> devices, SyncOptions options) {
        if (devices.size() != 1) {
            throw new IllegalArgumentException("backend single takes exactly one device, got "
                    + devices.size() + "; use cpu, ptx, opencl or nccl to average several");
        }
        return new SingleSynchronizer(devices.getFirst());
    }
}
