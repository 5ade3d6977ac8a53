package io.gradsync.tasks.compiler;

import io.gradsync.tasks.testing.DeviceRunner;
import io.gradsync.tasks.testing.PoclRunner;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The feature checks on the local OpenCL device (PoCL in CI). */
class OpenClFeatureTest extends FeatureChecks {
    @Override
    DeviceRunner device() {
        PoclRunner cl = PoclRunner.sharedOrNull();
        assumeTrue(cl != null, "no OpenCL platform: skipped");
        return cl;
    }
}
