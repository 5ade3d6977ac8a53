package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.List;

/** {@code cpu}: host staging, on any runtime's devices; {@code auto}'s last resort. */
public final class CpuProvider implements BackendProvider {
    @Override
    public SyncBackend backend() {
        return SyncBackend.CPU;
    }

    @Override
    public DeviceRuntime runtime() {
        return null;
    }

    @Override
    public int autoRank() {
        return 3;
    }

    @Override
    public String autoRefusal(List<? extends Device> devices, AutoContext context) {
        return null;
    }

    @Override
    public GradientSynchronizer create(List<? extends Device> devices, SyncOptions options) {
        return new CpuStagingSynchronizer(devices, options.cpu(), options.waitForCaller());
    }
}
