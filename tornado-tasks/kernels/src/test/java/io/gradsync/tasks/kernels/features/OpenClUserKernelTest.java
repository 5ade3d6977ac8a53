package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.*;
import io.gradsync.tasks.compiler.testing.*;

import io.gradsync.tasks.testing.DeviceRunner;
import io.gradsync.tasks.testing.OpenClRunner;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Users' kernels on the local OpenCL device (PoCL in CI). */
class OpenClUserKernelTest extends UserKernelChecks {
    @Override
    DeviceRunner device() {
        OpenClRunner cl = OpenClRunner.firstOrNull();
        assumeTrue(cl != null, "no OpenCL platform: skipped");
        return cl;
    }
}
