package io.gradsync.tasks;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.RuntimeStatus;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClPlatform;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.List;
import java.util.stream.IntStream;

/**
 * What this machine offers, runtime by runtime, and device selection. Nothing here throws
 * because a runtime is missing: its status says why instead.
 *
 * <p>Thread-safety: callable from any thread; each runtime is discovered once, also under concurrent first use.
 */
public final class DeviceCatalog {
    private DeviceCatalog() {
    }

    public static RuntimeStatus status(DeviceRuntime runtime) {
        return switch (runtime) {
            case JVM -> JvmRuntime.status();
            case CUDA -> CudaRuntime.status();
            case OPENCL -> OpenClRuntime.status();
        };
    }

    /** Statuses of every runtime, in the order CUDA, OpenCL, JVM. */
    public static List<RuntimeStatus> statuses() {
        return List.of(status(DeviceRuntime.CUDA), status(DeviceRuntime.OPENCL), status(DeviceRuntime.JVM));
    }

    /** The devices a runtime lists (JVM devices are made on request, so none are listed). */
    public static List<? extends Device> listed(DeviceRuntime runtime) {
        return switch (runtime) {
            case JVM -> List.of();
            case CUDA -> CudaRuntime.devices();
            case OPENCL -> OpenClRuntime.devices();
        };
    }

    /**
     * The first {@code count} devices of {@code runtime}. JVM devices are created fresh (the
     * caller closes them); CUDA and OpenCL devices are the process-wide ones. OpenCL devices come
     * from the first platform that has {@code count} of them (events and copies between devices
     * work within a platform), else from the list as it is.
     *
     * @throws IllegalArgumentException when the runtime is unavailable or has fewer devices
     */
    public static List<? extends Device> select(DeviceRuntime runtime, int count) {
        if (count < 1) {
            throw new IllegalArgumentException("device count must be at least 1, got " + count);
        }
        if (runtime == DeviceRuntime.JVM) {
            return JvmRuntime.createDevices(count);
        }
        RuntimeStatus s = status(runtime);
        if (!s.available()) {
            throw new IllegalArgumentException(runtime.label() + " is unavailable: " + s.detail());
        }
        List<? extends Device> all = listed(runtime);
        if (runtime == DeviceRuntime.OPENCL) {
            for (OpenClPlatform p : OpenClRuntime.platforms()) {
                List<OpenClDevice> same = OpenClRuntime.devices().stream().filter(d -> d.platform() == p).toList();
                if (same.size() >= count) {
                    return same.subList(0, count);
                }
            }
        }
        if (all.size() < count) {
            throw new IllegalArgumentException(count + " " + runtime.label() + " devices asked for, this machine has "
                    + all.size());
        }
        return all.subList(0, count);
    }

    /**
     * The GPUs of {@code runtime} usable together: every CUDA device; for OpenCL, the GPU devices of
     * the platform with most of them (NVIDIA's on a GPU node, never PoCL's CPU devices); none for JVM.
     */
    public static List<? extends Device> gpus(DeviceRuntime runtime) {
        if (!status(runtime).available()) {
            return List.of();
        }
        return switch (runtime) {
            case JVM -> List.of();
            case CUDA -> CudaRuntime.devices();
            case OPENCL -> {
                List<OpenClDevice> best = List.of();
                for (OpenClPlatform p : OpenClRuntime.platforms()) {
                    List<OpenClDevice> same = OpenClRuntime.devices().stream().filter(d -> d.platform() == p && d.isGpu()).toList();
                    best = same.size() > best.size() ? same : best;
                }
                yield best;
            }
        };
    }

    /**
     * {@code n} replicas over the first two of {@link #gpus}, or over one where there is one, as
     * logical devices: each GPU holds several replicas, each with its own buffers and streams. This is
     * how an n-GPU schedule runs (and is tested) where fewer GPUs are lent; its speed says nothing
     * about n GPUs. Empty when the runtime has no GPU.
     */
    public static List<? extends Device> sharedGpus(DeviceRuntime runtime, int n) {
        if (n < 1) {
            throw new IllegalArgumentException("replica count must be >= 1, got " + n);
        }
        List<? extends Device> physical = gpus(runtime);
        if (physical.isEmpty()) {
            return List.of();
        }
        int k = Math.min(2, physical.size());
        return switch (runtime) {
            case CUDA -> CudaRuntime.logicalDevices(n, k);
            case OPENCL -> IntStream.range(0, n).mapToObj(i -> ((OpenClDevice) physical.get(i % k)).logical(i)).toList();
            case JVM -> List.of();
        };
    }

    /** The best runtime for GPU work here: CUDA when it has a device, else JVM devices. */
    public static DeviceRuntime preferredRuntime() {
        return status(DeviceRuntime.CUDA).available() ? DeviceRuntime.CUDA : DeviceRuntime.JVM;
    }

    /** {@code matrix[i][j]}: CUDA device i can access device j's memory directly. */
    public static boolean[][] cudaPeerMatrix() {
        List<CudaDevice> devices = CudaRuntime.devices();
        boolean[][] m = new boolean[devices.size()][devices.size()];
        for (int i = 0; i < devices.size(); i++) {
            for (int j = 0; j < devices.size(); j++) {
                m[i][j] = devices.get(i).canAccessPeer(devices.get(j));
            }
        }
        return m;
    }
}
