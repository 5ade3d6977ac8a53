package io.gradsync.tasks.kernels;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.opencl.OpenClRuntime;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The bounds checks on the first OpenCL device (PoCL in CI, where a store out of bounds lands in the JVM's heap). */
class OpenClBoundsCheckTest extends BoundsChecks {
    @Override
    Device device() {
        assumeTrue(OpenClRuntime.status().available() && !OpenClRuntime.devices().isEmpty(), "no OpenCL device: skipped");
        return OpenClRuntime.devices().get(0);
    }
}
