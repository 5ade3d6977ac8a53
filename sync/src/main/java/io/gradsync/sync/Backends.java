package io.gradsync.sync;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The registered backends, and {@code auto}'s choice among them: the first by rank that takes the
 * devices (only those that average across processes when this process is one rank of several).
 */
final class Backends {
    /** Most devices the fused average kernels take (2..8 inputs): the ptx and opencl backends' limit. */
    static final int MAX_DEVICE_REPLICAS = 8;

    private static final List<BackendProvider> ALL = List.of(
            new SingleProvider(),
            new CpuProvider(),
            new PtxProvider(),
            new OpenClProvider(),
            new NcclProvider());

    private Backends() {
    }

    static List<BackendProvider> all() {
        return ALL;
    }

    static BackendProvider of(SyncBackend backend) {
        for (BackendProvider p : ALL) {
            if (p.backend() == backend) {
                return p;
            }
        }
        throw new IllegalArgumentException("backend " + backend.label() + " has no provider");
    }

    /** {@code auto}'s backend for the devices; throws where none fits, saying why each refused. */
    static SyncBackend auto(List<? extends Device> devices, BackendProvider.AutoContext context) {
        List<String> refusals = new ArrayList<>();
        for (BackendProvider p : ALL.stream().filter(p -> p.autoRank() >= 0)
                .sorted(Comparator.comparingInt(BackendProvider::autoRank)).toList()) {
            if (context.multiProcess() && !p.acrossProcesses()) {
                continue;
            }
            String refusal = p.autoRefusal(devices, context);
            if (refusal == null) {
                return p.backend();
            }
            refusals.add(p.backend().label() + ": " + refusal);
        }
        if (context.multiProcess()) {
            throw new UnsupportedOperationException("backend auto: this process is one rank of a multi-process job ("
                    + io.gradsync.sync.nccl.RendezvousConfig.WORLD_SIZE + " is set) and only nccl averages across processes, but "
                    + String.join("; ", refusals));
        }
        throw new UnsupportedOperationException("backend auto: no backend takes " + ids(devices) + ": " + String.join("; ", refusals));
    }

    /** The fused average kernels take 2..8 inputs. */
    static void checkKernelArity(String backend, List<? extends Device> devices) {
        if (devices.size() > MAX_DEVICE_REPLICAS) {
            throw new IllegalArgumentException("backend " + backend + " averages at most " + MAX_DEVICE_REPLICAS
                    + " devices (its fused kernels take 2..8 inputs), got " + devices.size());
        }
    }

    /** Two devices that are handles on one GPU ({@link CudaDevice#logical}), described, or null when there are none. */
    static String sharedGpu(List<? extends Device> devices) {
        for (int i = 0; i < devices.size(); i++) {
            for (int j = i + 1; j < devices.size(); j++) {
                if (devices.get(i) instanceof CudaDevice a && devices.get(j) instanceof CudaDevice b && a.sameGpu(b)) {
                    return a.id() + " and " + b.id() + " are the same GPU";
                }
            }
        }
        return null;
    }

    static boolean allCuda(List<? extends Device> devices) {
        return devices.stream().allMatch(d -> d instanceof CudaDevice);
    }

    static List<String> ids(List<? extends Device> devices) {
        return devices.stream().map(Device::id).toList();
    }
}
