package io.gradsync.tasks.kernels;

import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bounds checks on a CUDA GPU as they run by default ({@link CudaKernels#BOUNDS_CHECK_PROPERTY}
 * unset; fails without a GPU).
 */
@Tag("gpu")
class GpuCudaBoundsCheckTest extends BoundsChecks {

    @Override
    Device device() {
        assertTrue(CudaRuntime.status().available() && !CudaRuntime.devices().isEmpty(), "gpu-tagged test run without a CUDA GPU");
        return CudaRuntime.devices().getFirst();
    }
}
