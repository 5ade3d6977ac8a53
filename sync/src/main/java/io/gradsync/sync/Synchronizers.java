package io.gradsync.sync;

import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.sync.backend.Backends;
import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclAvailability;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.device.Device;
import io.gradsync.sync.backend.FusedWire;
import io.gradsync.sync.backend.wire.WireSynchronizer;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * Builds the synchronizer a {@link SyncBackend} names, for a list of local devices.
 *
 * <p>Thread-safety: callable from any thread; each synchronizer made has its own contract.
 */
public final class Synchronizers {
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
        BackendProvider provider = Backends.of(chosen);
        int world = launchedWorldSize(env);
        if (!provider.acrossProcesses() && world > 1) {
            // it would report a world of `world` ranks and average only this process's replicas
            String variable = RendezvousConfig.worldSizeVariable(env);
            throw new UnsupportedOperationException("backend " + chosen.label() + " averages only this process's replicas, but "
                    + variable + "=" + world + " says this process is one of " + world
                    + " ranks; use nccl to average across processes, or unset " + variable);
        }
        GradientSynchronizer made = provider.create(devices, options);
        if (options.wire() == DType.FP32 || made instanceof FusedWire fused && fused.wire() == options.wire()) {
            return made;
        }
        try { // fp32 gradients cross as 16-bit values: around whichever backend was made
            return new WireSynchronizer(made, options.wire(), devices, options.waitForCaller());
        } catch (RuntimeException e) {
            made.close();
            throw e;
        }
    }

    /**
     * {@code auto}: the first backend by rank that takes the devices ({@code Backends.auto}): one
     * device needs nothing; several CUDA GPUs use nccl where NCCL loads (and no two are one GPU's
     * logical devices), else ptx where every pair of them has peer access (and there are at most
     * 8), else cpu. opencl is never chosen. Under a launcher (torchrun, mpirun, srun; more than one rank)
     * only nccl can average across processes.
     */
    static SyncBackend resolveAuto(List<? extends Device> devices) {
        boolean launched = RendezvousConfig.isLaunched();
        boolean distributed = launched && RendezvousConfig.fromEnvironment().worldSize() > 1;
        return resolveAuto(devices, Nccl.availability(), distributed);
    }

    static SyncBackend resolveAuto(List<? extends Device> devices, NcclAvailability nccl, boolean multiProcess) {
        return Backends.auto(devices, new BackendProvider.AutoContext(nccl, multiProcess));
    }

    /** The world size a launcher set here, else 1; with the variable that says it. */
    private static int launchedWorldSize(java.util.Map<String, String> env) {
        String variable = RendezvousConfig.worldSizeVariable(env);
        if (variable == null) {
            return 1;
        }
        try {
            return Integer.parseInt(env.get(variable).strip());
        } catch (NumberFormatException e) { // as auto and nccl read it: a launcher's mistake, whichever backend
            throw new IllegalArgumentException("environment variable " + variable + "='" + env.get(variable) + "' is not an integer");
        }
    }
}
