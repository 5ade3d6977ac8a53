package io.gradsync.sync.backend.nccl;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.sync.backend.DeviceChecks;
import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclAvailability;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nccl}: NCCL's all-reduce (and broadcast, reduce-scatter, all-gather) in one process over every GPU given, or, under a launcher
 * ({@code WORLD_SIZE} set), one rank of a multi-process job on its one GPU. {@code auto}'s choice
 * for several distinct CUDA GPUs wherever NCCL loads.
 */
public final class NcclProvider implements BackendProvider {
    @Override
    public SyncBackend backend() {
        return SyncBackend.NCCL;
    }

    @Override
    public DeviceRuntime runtime() {
        return DeviceRuntime.CUDA;
    }

    @Override
    public int autoRank() {
        return 1;
    }

    @Override
    public boolean sharesGpus() {
        return false;
    }

    @Override
    public boolean acrossProcesses() {
        return true;
    }

    @Override
    public String autoRefusal(List<? extends Device> devices, AutoContext context) {
        if (!DeviceChecks.allCuda(devices)) {
            return "the devices are not CUDA GPUs: " + DeviceChecks.ids(devices);
        }
        if (!context.nccl().isAvailable()) {
            return context.nccl().reason();
        }
        String shared = context.multiProcess() ? null : DeviceChecks.sharedGpu(devices);
        return shared == null ? null : "takes one GPU per rank, but " + shared;
    }

    @Override
    public GradientSynchronizer create(List<? extends Device> devices, SyncOptions options) {
        NcclAvailability availability = Nccl.availability();
        if (!availability.isAvailable()) {
            throw new UnsupportedOperationException("backend nccl is unavailable: " + availability.reason());
        }
        List<CudaDevice> gpus = new ArrayList<>();
        for (Device d : devices) {
            if (!(d instanceof CudaDevice gpu)) {
                throw new IllegalArgumentException("backend nccl needs CUDA GPUs, got " + DeviceChecks.ids(devices));
            }
            gpus.add(gpu);
        }
        String shared = DeviceChecks.sharedGpu(gpus);
        if (shared != null) {
            throw new IllegalArgumentException("backend nccl needs one GPU per rank, but " + shared
                    + " (NCCL rejects duplicate GPUs in one communicator)");
        }
        if (!RendezvousConfig.isLaunched()) {
            return NcclSynchronizer.singleProcess(gpus, options.nccl(), options.waitForCaller());
        }
        RendezvousConfig config = RendezvousConfig.fromEnvironment();
        if (gpus.size() != 1) {
            throw new IllegalArgumentException("backend nccl: this process is rank " + config.rank() + " of "
                    + config.worldSize() + " and drives one GPU (the one of its local rank " + config.localRank() + "), but "
                    + gpus.size() + " were given: "
                    + DeviceChecks.ids(gpus));
        }
        return NcclSynchronizer.multiProcess(gpus.getFirst(), config, options.nccl(), options.waitForCaller());
    }
}
