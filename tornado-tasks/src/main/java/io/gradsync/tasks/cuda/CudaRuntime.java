package io.gradsync.tasks.cuda;

import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;

import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.RuntimeStatus;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * The CUDA driver through JCuda. Loading is attempted once; when the driver library or a GPU is
 * missing, {@link #status()} says why and nothing throws. Devices are process-wide: each holds
 * its GPU's primary context, the same one the CUDA runtime and NCCL use.
 */
public final class CudaRuntime {
    private static final Object LOCK = new Object();
    private static volatile RuntimeStatus status;
    private static volatile List<CudaDevice> devices = List.of();

    private CudaRuntime() {
    }

    public static RuntimeStatus status() {
        RuntimeStatus s = status;
        if (s == null) {
            synchronized (LOCK) {
                if (status == null) {
                    status = initialize();
                }
                s = status;
            }
        }
        return s;
    }

    /** All GPUs, in driver order; empty when CUDA is unavailable. */
    public static List<CudaDevice> devices() {
        status();
        return devices;
    }

    /** The GPU with this ordinal, or an exception saying what exists. */
    public static CudaDevice device(int ordinal) {
        RuntimeStatus s = status();
        if (!s.available()) {
            throw new IllegalStateException("CUDA is unavailable: " + s.detail());
        }
        if (ordinal < 0 || ordinal >= devices.size()) {
            throw new IllegalArgumentException("no CUDA device " + ordinal + "; this machine has "
                    + devices.size());
        }
        return devices.get(ordinal);
    }

    private static RuntimeStatus initialize() {
        try {
            JCudaDriver.setExceptionsEnabled(false);
        } catch (Throwable t) {
            return RuntimeStatus.unavailable(DeviceRuntime.CUDA, whyNotLoaded(t));
        }
        int rc = cuInit(0);
        if (rc != CUresult.CUDA_SUCCESS) {
            return RuntimeStatus.unavailable(DeviceRuntime.CUDA, "cuInit failed: " + CUresult.stringFor(rc));
        }
        int[] count = {0};
        rc = cuDeviceGetCount(count);
        if (rc != CUresult.CUDA_SUCCESS || count[0] == 0) {
            return RuntimeStatus.unavailable(DeviceRuntime.CUDA, rc != CUresult.CUDA_SUCCESS
                    ? "cuDeviceGetCount failed: " + CUresult.stringFor(rc) : "the driver reports no GPU");
        }
        List<CudaDevice> found = new ArrayList<>();
        for (int i = 0; i < count[0]; i++) {
            found.add(new CudaDevice(i));
        }
        devices = List.copyOf(found);
        int[] version = {0};
        cuDriverGetVersion(version);
        return RuntimeStatus.available(DeviceRuntime.CUDA, found.size(),
                "driver API " + version[0] / 1000 + "." + version[0] % 1000 / 10);
    }

    /** The loader's message names the missing library; keep its first line. */
    private static String whyNotLoaded(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        String msg = String.valueOf(root.getMessage());
        if (msg.contains("libcuda.so")) {
            return "libcuda.so.1 not found (no NVIDIA driver on this machine)";
        }
        return "JCuda driver library did not load: " + msg.lines().findFirst().orElse(msg);
    }
}
