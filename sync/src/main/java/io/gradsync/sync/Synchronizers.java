package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/** Builds the synchronizer a {@link SyncBackend} names, for a list of local devices. */
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
     */
    public static GradientSynchronizer create(SyncBackend backend, List<? extends Device> devices, SyncOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        if (devices == null || devices.isEmpty()) {
            throw new IllegalArgumentException("devices: at least one device is needed");
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
        return switch (chosen) {
            case SINGLE -> {
                if (devices.size() != 1) {
                    throw new IllegalArgumentException("backend single takes exactly one device, got "
                            + devices.size() + "; use cpu, ptx, opencl or nccl to average several");
                }
                yield new SingleSynchronizer(devices.getFirst());
            }
            case CPU -> new CpuStagingSynchronizer(devices, options);
            case PTX, OPENCL, NCCL -> throw new UnsupportedOperationException("backend " + chosen.label()
                    + " is not available in this build yet");
            case AUTO -> throw new AssertionError("auto resolved above");
        };
    }

    /** One device needs nothing; otherwise the fastest backend built and usable here. */
    static SyncBackend resolveAuto(List<? extends Device> devices) {
        return devices.size() == 1 ? SyncBackend.SINGLE : SyncBackend.CPU;
    }
}
