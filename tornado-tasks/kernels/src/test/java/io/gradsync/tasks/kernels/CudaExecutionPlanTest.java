package io.gradsync.tasks.kernels;

import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The plan checks on GPU 0 (needs a CUDA GPU; fails without one). */
@Tag("gpu")
class CudaExecutionPlanTest extends ExecutionPlanChecks {
    @Override
    Device device() {
        assertTrue(CudaRuntime.status().available() && !CudaRuntime.devices().isEmpty(), "gpu-tagged test run without a CUDA GPU");
        return CudaRuntime.devices().get(0);
    }
}
