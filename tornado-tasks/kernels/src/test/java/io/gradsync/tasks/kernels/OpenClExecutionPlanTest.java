package io.gradsync.tasks.kernels;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.opencl.OpenClRuntime;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The plan checks on the first OpenCL device (PoCL in CI). */
class OpenClExecutionPlanTest extends ExecutionPlanChecks {
    @Override
    Device device() {
        assumeTrue(OpenClRuntime.status().available() && !OpenClRuntime.devices().isEmpty(), "no OpenCL device: skipped");
        return OpenClRuntime.devices().get(0);
    }
}
