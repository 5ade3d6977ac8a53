package io.gradsync.bench;

import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.backend.Backends;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClPlatform;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Which devices a backend runs on. Each backend has its own runtime (opencl averages on OpenCL
 * devices, ptx and nccl on CUDA GPUs, cpu and single on the preferred runtime: CUDA where present,
 * else JVM devices), so one {@code bench --backend all} compares backends that live on different
 * runtimes over the same sizes and device count. Devices are selected once per runtime and shared.
 */
public final class BackendDevices implements AutoCloseable {
    private final DeviceRuntime preferred;
    private final int count;
    private final boolean share;
    private final Map<DeviceRuntime, List<? extends Device>> selected = new LinkedHashMap<>();

    /**
     * @param preferred runtime for the backends that run anywhere (cpu, single), or null for
     *                  {@link DeviceCatalog#preferredRuntime()}
     */
    public BackendDevices(DeviceRuntime preferred, int count) {
        this(preferred, count, false);
    }

    /**
     * @param share where there are fewer GPUs than {@code count}, replicas share them as logical
     *              devices ({@code DeviceCatalog.sharedGpus}, {@code OpenClRuntime.logicalDevices}):
     *              the schedules of {@code count} replicas run, but no bytes cross between GPUs
     */
    public BackendDevices(DeviceRuntime preferred, int count, boolean share) {
        this.preferred = preferred == null ? DeviceCatalog.preferredRuntime() : preferred;
        this.count = count;
        this.share = share;
    }

    /** True where {@code devices} are logical devices sharing fewer GPUs. */
    public static boolean sharing(List<? extends Device> devices) {
        return devices.stream().anyMatch(d -> d.id().contains("#"));
    }

    /** The runtime {@code backend} averages on: its provider's, or the preferred one where it takes any (and for auto). */
    public DeviceRuntime runtimeOf(SyncBackend backend) {
        DeviceRuntime own = backend == SyncBackend.AUTO ? null : Backends.of(backend).runtime();
        return own == null ? preferred : own;
    }

    /**
     * The devices for {@code backend}.
     *
     * @throws IllegalArgumentException naming why this machine cannot give {@code count} of them
     */
    public List<? extends Device> devicesFor(SyncBackend backend) {
        DeviceRuntime rt = runtimeOf(backend);
        List<? extends Device> d = selected.get(rt);
        if (d == null) {
            if (share && rt == DeviceRuntime.CUDA && DeviceCatalog.gpus(rt).size() < count) {
                d = DeviceCatalog.sharedGpus(rt, count);
            } else if (share && rt == DeviceRuntime.OPENCL && OpenClRuntime.status().available() && firstPlatformDevices() < count) {
                d = OpenClRuntime.logicalDevices(count); // over the first platform's: NVIDIA's GPUs before PoCL's CPU
            } else {
                d = rt == DeviceRuntime.OPENCL ? openCl(count) : DeviceCatalog.select(rt, count);
            }
            selected.put(rt, d);
        }
        return d;
    }

    /** Runtimes selected so far, with their devices. */
    public Map<DeviceRuntime, List<? extends Device>> selected() {
        return selected;
    }

    public DeviceRuntime preferred() {
        return preferred;
    }

    /**
     * {@code n} OpenCL devices of one platform (an OpenCL context spans one platform), GPUs'
     * platforms before PoCL's CPU devices.
     */
    public static List<OpenClDevice> openCl(int n) {
        var status = OpenClRuntime.status();
        if (!status.available()) {
            throw new IllegalArgumentException("OpenCL unavailable: " + status.detail());
        }
        Map<OpenClPlatform, List<OpenClDevice>> byPlatform = new LinkedHashMap<>();
        for (OpenClDevice d : OpenClRuntime.devices()) {
            byPlatform.computeIfAbsent(d.platform(), p -> new ArrayList<>()).add(d);
        }
        List<OpenClDevice> best = null;
        for (List<OpenClDevice> devices : byPlatform.values()) {
            if (devices.size() >= n && (best == null || isPocl(best.getFirst()) && !isPocl(devices.getFirst()))) {
                best = devices;
            }
        }
        if (best == null) {
            int most = byPlatform.values().stream().mapToInt(List::size).max().orElse(0);
            throw new IllegalArgumentException(n + " OpenCL devices of one platform asked for, the most here is " + most
                    + (OpenClRuntime.devices().stream().anyMatch(BackendDevices::isPocl)
                            ? " (PoCL: set POCL_DEVICES=\"" + "pthread ".repeat(n).trim() + "\" for " + n + " CPU devices)" : ""));
        }
        return best.subList(0, n);
    }

    private static long firstPlatformDevices() {
        List<OpenClDevice> all = OpenClRuntime.devices();
        return all.stream().filter(x -> x.platform() == all.getFirst().platform()).count();
    }

    /** PoCL runs OpenCL on the host CPU: sized like the JVM, not like a GPU. */
    public static boolean isPocl(OpenClDevice d) {
        return d.platform().name().toLowerCase(Locale.ROOT).contains("portable computing language");
    }

    /** Closes the JVM devices and logical OpenCL devices made for this run (the others belong to their runtimes). */
    @Override
    public void close() {
        List<? extends Device> jvm = selected.get(DeviceRuntime.JVM);
        if (jvm != null) {
            jvm.forEach(Device::close);
        }
        List<? extends Device> openCl = selected.get(DeviceRuntime.OPENCL);
        if (openCl != null && sharing(openCl)) {
            openCl.forEach(Device::close);
        }
    }
}
