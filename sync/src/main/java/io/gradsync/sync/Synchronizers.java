package io.gradsync.sync;

import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclAvailability;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.opencl.OpenClDevice;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * Builds the synchronizer a {@link SyncBackend} names, for a list of local devices.
 *
 * <p>Thread-safety: callable from any thread; each synchronizer made has its own contract.
 */
public final class Synchronizers {
    /** Most devices the ptx and opencl backends average over. */
    static final int MAX_DEVICE_REPLICAS = 8;

    private Synchronizers() {
    }

    public static GradientSynchronizer create(SyncBackend backend, List<? extends Device> devices) {
        return create(backend, devices, SyncOptions.defaults());
    }

    /**
     * @param devices one per replica, in replica order; all of one runtime
     * @throws IllegalArgumentException for an empty or mixed device list, or a backend that cannot
     *                                  serve these devices (the message says which and why)
     * @throws UnsupportedOperationException when the backend does not run here or on this runtime's
     *                                  devices (nccl without NCCL, ptx without CUDA GPUs, opencl
     *                                  without OpenCL devices), so that callers trying every backend skip it
     */
    public static GradientSynchronizer create(SyncBackend backend, List<? extends Device> devices, SyncOptions options) {
        return create(backend, devices, options, System.getenv());
    }

    /** {@link #create(SyncBackend, List, SyncOptions)} under the environment {@code env} (the launcher's variables). */
    static GradientSynchronizer create(SyncBackend backend, List<? extends Device> devices, SyncOptions options,
            java.util.Map<String, String> env) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        if (devices == null || devices.isEmpty()) {
            throw new IllegalArgumentException("devices: at least one device is needed");
        }
        for (int i = 0; i < devices.size(); i++) {
            if (devices.get(i) == null) {
                throw new IllegalArgumentException("devices: device " + i + " of " + devices.size() + " is null");
            }
        }
        if (new HashSet<>(devices).size() != devices.size()) {
            throw new IllegalArgumentException("devices: a device is listed twice: "
                    + devices.stream().map(Device::id).toList());
        }
        var runtime = devices.getFirst().runtime();
        for (Device d : devices) {
            if (d.runtime() != runtime) {
                throw new IllegalArgumentException("devices: all must be of one runtime, got " + devices.stream()
                        .map(Device::id).toList());
            }
        }
        SyncBackend chosen = backend == SyncBackend.AUTO ? resolveAuto(devices) : backend;
        int world = launchedWorldSize(env);
        if (chosen != SyncBackend.NCCL && world > 1) {
            // it would report a world of `world` ranks and average only this process's replicas
            throw new UnsupportedOperationException("backend " + chosen.label() + " averages only this process's replicas, but "
                    + RendezvousConfig.WORLD_SIZE + "=" + world + " says this process is one of " + world
                    + " ranks; use nccl to average across processes, or unset " + RendezvousConfig.WORLD_SIZE);
        }
        return switch (chosen) {
            case SINGLE -> {
                if (devices.size() != 1) {
                    throw new IllegalArgumentException("backend single takes exactly one device, got "
                            + devices.size() + "; use cpu, ptx, opencl or nccl to average several");
                }
                yield new SingleSynchronizer(devices.getFirst());
            }
            case CPU -> new CpuStagingSynchronizer(devices, options);
            case NCCL -> nccl(devices, options);
            case PTX -> PtxSynchronizer.create(devices, options);
            case OPENCL -> opencl(devices, options);
            case AUTO -> throw new AssertionError("auto resolved above");
        };
    }

    /**
     * One device needs nothing; several CUDA GPUs use nccl where NCCL loads (and no two are one
     * GPU's logical devices), else ptx where every
     * pair of them has peer access (and there are at most 8), else cpu. opencl is never chosen. Under a
     * launcher (WORLD_SIZE set, more than one rank) only nccl can average across processes.
     */
    static SyncBackend resolveAuto(List<? extends Device> devices) {
        boolean launched = RendezvousConfig.isLaunched();
        boolean distributed = launched && RendezvousConfig.fromEnvironment().worldSize() > 1;
        return resolveAuto(devices, Nccl.availability(), distributed);
    }

    static SyncBackend resolveAuto(List<? extends Device> devices, NcclAvailability nccl, boolean multiProcess) {
        boolean allCuda = devices.stream().allMatch(d -> d instanceof CudaDevice);
        if (multiProcess) {
            if (allCuda && nccl.isAvailable()) {
                return SyncBackend.NCCL;
            }
            throw new UnsupportedOperationException("backend auto: this process is one rank of a multi-process job ("
                    + RendezvousConfig.WORLD_SIZE + " is set) and only nccl averages across processes, but "
                    + (allCuda ? nccl.reason() : "the devices are not CUDA GPUs: " + devices.stream().map(Device::id).toList()));
        }
        if (devices.size() == 1) {
            return SyncBackend.SINGLE;
        }
        if (allCuda && nccl.isAvailable() && sharedGpu(devices) == null) {
            return SyncBackend.NCCL;
        }
        return allCuda && PtxSynchronizer.usable(devices) ? SyncBackend.PTX : SyncBackend.CPU;
    }

    /** WORLD_SIZE where a launcher set it to a number, else 1. */
    private static int launchedWorldSize(java.util.Map<String, String> env) {
        if (!RendezvousConfig.isLaunched(env)) {
            return 1;
        }
        try {
            return Integer.parseInt(env.get(RendezvousConfig.WORLD_SIZE).strip());
        } catch (NumberFormatException e) {
            return 1; // nccl's own reading of the variables reports it
        }
    }

    /** The opencl backend: OpenCL devices of one platform (logical devices over one physical device count as several). */
    private static GradientSynchronizer opencl(List<? extends Device> devices, SyncOptions options) {
        List<OpenClDevice> cl = new ArrayList<>();
        for (Device d : devices) {
            if (!(d instanceof OpenClDevice o)) {
                throw new UnsupportedOperationException("backend opencl needs OpenCL devices, got "
                        + devices.stream().map(Device::id).toList());
            }
            if (o.platform() != ((OpenClDevice) devices.getFirst()).platform()) {
                throw new IllegalArgumentException("backend opencl needs devices of one OpenCL platform, got "
                        + devices.stream().map(x -> x.id() + " (" + ((OpenClDevice) x).platform().name() + ")").toList());
            }
            cl.add(o);
        }
        checkKernelArity("opencl", devices);
        return new OpenClSynchronizer(cl, options);
    }

    /** Two devices that are handles on one GPU ({@link CudaDevice#logical}), described, or null when there are none. */
    private static String sharedGpu(List<? extends Device> devices) {
        for (int i = 0; i < devices.size(); i++) {
            for (int j = i + 1; j < devices.size(); j++) {
                if (devices.get(i) instanceof CudaDevice a && devices.get(j) instanceof CudaDevice b && a.sameGpu(b)) {
                    return a.id() + " and " + b.id() + " are the same GPU";
                }
            }
        }
        return null;
    }

    /** The fused average kernels take 2..8 inputs. */
    static void checkKernelArity(String backend, List<? extends Device> devices) {
        if (devices.size() > MAX_DEVICE_REPLICAS) {
            throw new IllegalArgumentException("backend " + backend + " averages at most " + MAX_DEVICE_REPLICAS
                    + " devices (its fused kernels take 2..8 inputs), got " + devices.size());
        }
    }

    /**
     * NCCL in one process over every device given, or, under a launcher ({@code WORLD_SIZE} set),
     * one rank of a multi-process job on the one device given.
     */
    private static GradientSynchronizer nccl(List<? extends Device> devices, SyncOptions options) {
        NcclAvailability availability = Nccl.availability();
        if (!availability.isAvailable()) {
            throw new UnsupportedOperationException("backend nccl is unavailable: " + availability.reason());
        }
        List<CudaDevice> gpus = new ArrayList<>();
        for (Device d : devices) {
            if (!(d instanceof CudaDevice gpu)) {
                throw new IllegalArgumentException("backend nccl needs CUDA GPUs, got " + devices.stream().map(Device::id).toList());
            }
            gpus.add(gpu);
        }
        String shared = sharedGpu(gpus);
        if (shared != null) {
            throw new IllegalArgumentException("backend nccl needs one GPU per rank, but " + shared
                    + " (NCCL rejects duplicate GPUs in one communicator)");
        }
        if (!RendezvousConfig.isLaunched()) {
            return NcclSynchronizer.singleProcess(gpus, options);
        }
        RendezvousConfig config = RendezvousConfig.fromEnvironment();
        if (gpus.size() != 1) {
            throw new IllegalArgumentException("backend nccl: this process is rank " + config.rank() + " of "
                    + RendezvousConfig.WORLD_SIZE + "=" + config.worldSize() + " and drives one GPU (the one of "
                    + RendezvousConfig.LOCAL_RANK + "=" + config.localRank() + "), but " + gpus.size() + " were given: "
                    + gpus.stream().map(Device::id).toList());
        }
        return NcclSynchronizer.multiProcess(gpus.getFirst(), config, options);
    }
}
