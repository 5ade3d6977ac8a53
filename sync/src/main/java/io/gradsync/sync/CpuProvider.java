package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import java.util.List;

/** {@code cpu}: host staging, on any runtime's devices; {@code auto}'s last resort. */
final class CpuProvider implements BackendProvider {
    @Override
    public SyncBackend backend() {
        return SyncBackend.CPU;
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
        return new CpuStagingSynchronizer(devices, options);
    }
}
