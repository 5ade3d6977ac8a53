package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import org.junit.jupiter.api.Test;
import io.gradsync.tasks.opencl.OpenClRuntime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The bounds checks on the first OpenCL device (PoCL in CI, where a store out of bounds lands in the JVM's heap). */
class OpenClBoundsCheckTest extends BoundsChecks {
    @Override
    Device device() {
        assumeTrue(OpenClRuntime.status().available() && !OpenClRuntime.devices().isEmpty(), "no OpenCL device: skipped");
        return OpenClRuntime.devices().get(0);
    }

    /** {@code gradsync.openClBoundsChecks=false}: a user's kernel runs its unchecked program, with the same results in bounds. */
    @Test
    void theChecksCanBeTurnedOff() {
        Device d = device();
        int n = 4099;
        try (IntArray index = new IntArray(n); FloatArray src = new FloatArray(n); FloatArray checked = new FloatArray(n);
                FloatArray unchecked = new FloatArray(n)) {
            for (int i = 0; i < n; i++) {
                index.set(i, (i * 7919) % n);
                src.set(i, i * 0.5f);
            }
            for (FloatArray out : new FloatArray[] {checked, unchecked}) {
                if (out == unchecked) {
                    System.setProperty(OpenClKernels.BOUNDS_CHECK_PROPERTY, "false");
                }
                try (ExecutionPlan plan = new ExecutionPlan(new TaskGraph("g" + (out == unchecked))
                        .transferToDevice(DataTransferMode.EVERY_EXECUTION, index, src)
                        .task("t", BoundsChecks::gather, index, src, out)
                        .transferToHost(DataTransferMode.EVERY_EXECUTION, out).snapshot()).withDevice(d)) {
                    plan.execute();
                } finally {
                    System.clearProperty(OpenClKernels.BOUNDS_CHECK_PROPERTY);
                }
            }
            for (int i = 0; i < n; i++) {
                assertEquals(src.get(index.get(i)), unchecked.get(i), "element " + i);
                assertEquals(checked.get(i), unchecked.get(i), "element " + i);
            }
        }
    }
}
