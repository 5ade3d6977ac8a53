package io.gradsync.tasks.cuda;

import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;

import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.internal.Discovery;
import io.gradsync.tasks.device.internal.Discovery.Found;
import io.gradsync.tasks.device.RuntimeStatus;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * The CUDA driver through JCuda. Loading is attempted once; when the driver library or a GPU is
 * missing, {@link #status()} says why and nothing throws. Devices are process-wide: each holds
 * its GPU's primary context, the same one the CUDA runtime and NCCL use.
 *
 * <p>Thread-safety: callable from any thread; discovery happens once.
 */
public final class CudaRuntime {
    private static final Discovery<CudaDevice> DISCOVERY = new Discovery<>("CUDA", CudaRuntime::look);

    private CudaRuntime() {
    }

    public static RuntimeStatus status() {
        return DISCOVERY.status();
    }

    /** All GPUs, in driver order; empty when CUDA is unavailable. */
    public static List<CudaDevice> devices() {
        return DISCOVERY.devices();
    }

    /** The GPU with this ordinal, or an exception saying what exists. */
    public static CudaDevice device(int ordinal) {
        return DISCOVERY.device(ordinal);
    }

    /**
     * {@code n} logical devices over the first {@code gpus} GPUs, cycling through them: with 2
     * GPUs, {@code logicalDevices(4, 2)} gives {@code cuda:0#0, cuda:1#1, cuda:0#2, cuda:1#3}, so a
     * 4-GPU schedule runs with two replicas on each GPU. Each call makes new handles.
     */
    public static List<CudaDevice> logicalDevices(int n, int gpus) {
        List<CudaDevice> all = DISCOVERY.requireDevices();
        if (n < 1) {
            throw new IllegalArgumentException("logical device count must be >= 1, got " + n);
        }
        if (gpus < 1 || gpus > all.size()) {
            throw new IllegalArgumentException("logical devices over " + gpus + " GPUs; this machine has " + all.size());
        }
        List<CudaDevice> logical = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            logical.add(all.get(i % gpus).logical(i));
        }
        return List.copyOf(logical);
    }

    private static Found<CudaDevice> look() {
        try {
            JCudaDriver.setExceptionsEnabled(false);
        } catch (Throwable t) {
            return Found.none(RuntimeStatus.unavailable(DeviceRuntime.CUDA, whyNotLoaded(t)));
        }
        int rc = cuInit(0);
        if (rc != CUresult.CUDA_SUCCESS) {
            return Found.none(RuntimeStatus.unavailable(DeviceRuntime.CUDA, "cuInit failed: " + CUresult.stringFor(rc)));
        }
        int[] count = {0};
        rc = cuDeviceGetCount(count);
        if (rc != CUresult.CUDA_SUCCESS || count[0] == 0) {
            return Found.none(RuntimeStatus.unavailable(DeviceRuntime.CUDA, rc != CUresult.CUDA_SUCCESS
                    ? "cuDeviceGetCount failed: " + CUresult.stringFor(rc) : "the driver reports no GPU"));
        }
        List<CudaDevice> found = new ArrayList<>();
        for (int i = 0; i < count[0]; i++) {
            found.add(new CudaDevice(i));
        }
        int[] version = {0};
        cuDriverGetVersion(version);
        return new Found<>(RuntimeStatus.available(DeviceRuntime.CUDA, found.size(),
                "driver API " + version[0] / 1000 + "." + version[0] % 1000 / 10), found);
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
