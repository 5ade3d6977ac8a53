package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.*;
import io.gradsync.tasks.compiler.testing.*;

import io.gradsync.tasks.testing.DeviceRunner;
import io.gradsync.tasks.testing.OpenClRunner;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/** Users' kernels on an OpenCL GPU (NVIDIA's OpenCL on the GPU node; fails without one). */
@Tag("gpu")
class GpuOpenClUserKernelTest extends UserKernelChecks {
    @Override
    DeviceRunner device() {
        OpenClRunner cl = OpenClRunner.gpuOrNull();
        assertNotNull(cl, "gpu-tagged test run without an OpenCL GPU");
        return cl;
    }
}
