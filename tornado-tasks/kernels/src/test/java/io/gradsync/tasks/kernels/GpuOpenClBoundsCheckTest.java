package io.gradsync.tasks.kernels;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClRuntime;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/** The bounds checks on an OpenCL GPU (NVIDIA's OpenCL on the GPU node; fails without one). */
@Tag("gpu")
class GpuOpenClBoundsCheckTest extends BoundsChecks {
    @Override
    Device device() {
        OpenClDevice gpu = OpenClRuntime.devices().stream().filter(OpenClDevice::isGpu).findFirst().orElse(null);
        assertNotNull(gpu, "gpu-tagged test run without an OpenCL GPU");
        return gpu;
    }
}
