package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import java.util.List;

/** {@code ptx}: 2..8 CUDA GPUs averaging with the project's kernels; {@code auto} picks it where every pair has peer access. */
final class PtxProvider implements BackendProvider {
    @Override
    public SyncBackend backend() {
        return SyncBackend.PTX;
    }

    @Override
    public int autoRank() {
        return 2;
    }

    @Override
    public String autoRefusal(List<? extends Device> devices, AutoContext context) {
        if (!Backends.allCuda(devices)) {
            return "the devices are not CUDA GPUs";
        }
        return PtxSynchronizer.usable(devices) ? null
                : "takes 2.." + Backends.MAX_DEVICE_REPLICAS + " GPUs with peer access between every pair";
    }

    @Override
    public GradientSynchronizer create(List<? extends Device> devices, SyncOptions options) {
        return PtxSynchronizer.create(devices, options);
    }
}
