package io.gradsync.sync.backend;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.List;

/**
 * Everything the rest of gradsync needs to know of one backend: its name, the runtime it works on,
 * its place in {@code auto}'s order, whether it averages across processes, and how it checks its
 * devices and makes its synchronizer from its own options. {@code Synchronizers}, {@code auto}, the
 * command line, the soak and the backend contract test go through {@link Backends#all()}, so a new
 * backend is a package of its own plus one line there.
 *
 * <p>Thread-safety: implementations are stateless; any thread.
 */
public interface BackendProvider {

    /** The name users parse it from. */
    SyncBackend backend();

    /**
     * The runtime whose devices it averages on, or null where it takes any runtime's (the bench then
     * gives it the preferred runtime's: CUDA where present, else JVM devices).
     */
    DeviceRuntime runtime();

    /** Its place in {@code auto}'s order, lowest first; negative where {@code auto} never picks it. */
    int autoRank();

    /**
     * False where every device must be a GPU of its own, so that logical devices sharing a GPU
     * ({@code CudaRuntime.logicalDevices}) are refused (NCCL takes one GPU per rank).
     */
    default boolean sharesGpus() {
        return true;
    }

    /** True where one process per GPU averages across processes (a launcher's {@code WORLD_SIZE} above 1). */
    default boolean acrossProcesses() {
        return false;
    }

    /**
     * Null where {@code auto} may pick this backend for {@code devices} here; else why not, as a
     * clause ("NCCL does not load: ...").
     */
    String autoRefusal(List<? extends Device> devices, AutoContext context);

    /**
     * Checks the devices (one per replica, of one runtime, none twice: already checked) and makes the
     * synchronizer, reading only its own part of {@code options} and the shared
     * {@link SyncOptions#waitForCaller()} (and {@link SyncOptions#wire()} where the synchronizer is a
     * {@link FusedWire}; any other is wrapped in the wire).
     *
     * @throws IllegalArgumentException where this backend cannot serve these devices, naming itself and why
     * @throws UnsupportedOperationException where it does not run here or on this runtime at all
     */
    GradientSynchronizer create(List<? extends Device> devices, SyncOptions options);

    /** What {@code auto} decides with, beside the devices: whether NCCL loads, and whether this process is one rank of several. */
    record AutoContext(io.gradsync.nccl.NcclAvailability nccl, boolean multiProcess) {
    }
}
