package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.sync.backend.DeviceChecks;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.List;

/** {@code ptx}: 2..8 CUDA GPUs averaging with the project's kernels; {@code auto} picks it where every pair has peer access. */
public final class PtxProvider implements BackendProvider {
    @Override
    public SyncBackend backend() {
        return SyncBackend.PTX;
    }

    @Override
    public DeviceRuntime runtime() {
        return DeviceRuntime.CUDA;
    }

    @Override
    public int autoRank() {
        return 2;
    }

    @Override
    public String autoRefusal(List<? extends Device> devices, AutoContext context) {
        if (!DeviceChecks.allCuda(devices)) {
            return "the devices are not CUDA GPUs";
        }
        return PtxSynchronizer.usable(devices) ? null
                : "takes 2.." + DeviceChecks.MAX_DEVICE_REPLICAS + " GPUs with peer access between every pair";
    }

    @Override
    public GradientSynchronizer create(List<? extends Device> devices, SyncOptions options) {
        boolean fused = Boolean.parseBoolean(System.getProperty(PtxSynchronizer.FUSED_WIRE_PROPERTY, "true"));
        return PtxSynchronizer.create(devices, options.ptx(), options.waitForCaller(), fused ? options.wire() : DType.FP32);
    }
}
