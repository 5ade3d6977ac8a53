package io.gradsync.sync.backend;

import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.backend.cpu.CpuProvider;
import io.gradsync.sync.backend.nccl.NcclProvider;
import io.gradsync.sync.backend.opencl.OpenClProvider;
import io.gradsync.sync.backend.ptx.PtxProvider;
import io.gradsync.sync.backend.single.SingleProvider;
import io.gradsync.tasks.device.Device;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The registered backends, one line each, and {@code auto}'s choice among them: the first by rank
 * that takes the devices (only those that average across processes when this process is one rank
 * of several).
 */
public final class Backends {
    private static final List<BackendProvider> ALL = List.of(
            new SingleProvider(),
            new CpuProvider(),
            new PtxProvider(),
            new OpenClProvider(),
            new NcclProvider());

    private Backends() {
    }

    /** Every provider, in registration order. */
    public static List<BackendProvider> all() {
        return ALL;
    }

    /** The provider of {@code backend}; {@code auto} has none (resolve it with {@link #auto} first). */
    public static BackendProvider of(SyncBackend backend) {
        for (BackendProvider p : ALL) {
            if (p.backend() == backend) {
                return p;
            }
        }
        throw new IllegalArgumentException("backend " + backend.label() + " has no provider");
    }

    /** {@code auto}'s backend for the devices; throws where none fits, saying why each refused. */
    public static SyncBackend auto(List<? extends Device> devices, BackendProvider.AutoContext context) {
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
        throw new UnsupportedOperationException("backend auto: no backend takes " + DeviceChecks.ids(devices) + ": "
                + String.join("; ", refusals));
    }
}
