package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.DeviceRuntime;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's own-kernel example runs and matches Java on a JVM device and on OpenCL (PoCL in CI). */
class ReadmeKernelExampleTest {
    @Test
    void onTheJvm(@TempDir Path out) throws Exception {
        String printed = ReadmeKernelExample.run("jvm", out);
        assertTrue(printed.contains("the same bits as Java") && printed.contains("__kernel void k_logSoftmax"), printed);
    }

    @Test
    void onOpenCl(@TempDir Path out) throws Exception {
        assumeTrue(DeviceCatalog.status(DeviceRuntime.OPENCL).available() && !DeviceCatalog.listed(DeviceRuntime.OPENCL).isEmpty(),
                () -> "no OpenCL device: " + DeviceCatalog.status(DeviceRuntime.OPENCL).describe());
        String printed = ReadmeKernelExample.run("opencl", out);
        assertTrue(printed.contains("on opencl:0: the same bits as Java"), printed);
    }
}
