package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.*;
import io.gradsync.tasks.compiler.testing.*;

import io.gradsync.tasks.testing.CudaRunner;
import io.gradsync.tasks.testing.DeviceRunner;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/** Users' kernels as PTX on GPU 0 (needs a CUDA GPU; fails without one). */
@Tag("gpu")
class CudaUserKernelTest extends UserKernelChecks {
    @Override
    DeviceRunner device() {
        CudaRunner cuda = CudaRunner.firstOrNull();
        assertNotNull(cuda, "gpu-tagged test run without a usable CUDA driver and GPU");
        return cuda;
    }
}
