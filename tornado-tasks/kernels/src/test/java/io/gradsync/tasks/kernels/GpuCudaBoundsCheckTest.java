package io.gradsync.tasks.kernels;

import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bounds checks on a CUDA GPU, with {@link CudaKernels#BOUNDS_CHECK_PROPERTY} on (off by
 * default until every GPU test has run with it; fails without a GPU).
 */
@Tag("gpu")
class GpuCudaBoundsCheckTest extends BoundsChecks {
    @BeforeAll
    static void checksOn() {
        System.setProperty(CudaKernels.BOUNDS_CHECK_PROPERTY, "true");
    }

    @AfterAll
    static void checksOff() {
        System.clearProperty(CudaKernels.BOUNDS_CHECK_PROPERTY);
    }

    @Override
    Device device() {
        assertTrue(CudaRuntime.status().available() && !CudaRuntime.devices().isEmpty(), "gpu-tagged test run without a CUDA GPU");
        return CudaRuntime.devices().getFirst();
    }
}
