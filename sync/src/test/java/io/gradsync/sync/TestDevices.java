package io.gradsync.sync;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.List;

/**
 * The devices the backend tests run a backend on: OpenCL logical devices (PoCL in CI, NVIDIA's on
 * the node) for opencl, CUDA logical devices over GPU 0 on GPUs, else JVM devices. Devices the
 * caller must close are added to {@code opened}; an OpenCL test where OpenCL is missing is skipped.
 */
final class TestDevices {
    private TestDevices() {
    }

    static List<? extends Device> forBackend(String backend, int n, boolean gpus, List<Device> opened) {
        if (backend.equals("opencl")) {
            assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
            List<? extends Device> d = OpenClRuntime.logicalDevices(n);
            opened.addAll(d);
            return d;
        }
        if (gpus) {
            return CudaRuntime.logicalDevices(n, 1);
        }
        List<? extends Device> d = JvmRuntime.createDevices(n);
        opened.addAll(d);
        return d;
    }
}
