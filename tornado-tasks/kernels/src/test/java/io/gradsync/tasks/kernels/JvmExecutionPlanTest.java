package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The plan checks on JVM devices, plus running tasks on two devices at once. */
class JvmExecutionPlanTest extends ExecutionPlanChecks {
    private static List<JvmDevice> devices;

    @BeforeAll
    static void devices() {
        devices = JvmRuntime.createDevices(2);
    }

    @AfterAll
    static void close() {
        devices.forEach(JvmDevice::close);
    }

    @Override
    Device device() {
        return devices.get(0);
    }

    @Test
    void tasksOnTwoDevicesRunAtOnce() {
        int n = 5000;
        try (FloatArray a = new FloatArray(n); FloatArray b = new FloatArray(n)) {
            a.fill(2f);
            b.fill(3f);
            var graph = new TaskGraph("two")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, a, b)
                    .task("left", ElementwiseKernels::scale, a, 0.5f)
                    .task("right", ElementwiseKernels::scale, b, 2f)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, a, b)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(devices.get(0)).withDevice("right", devices.get(1))) {
                plan.execute();
            }
            assertEquals(1f, a.get(n - 1));
            assertEquals(6f, b.get(n - 1));
        }
    }

    @Test
    void crossDeviceDependencyIsRejected() {
        try (FloatArray a = new FloatArray(8); FloatArray b = new FloatArray(8)) {
            var graph = new TaskGraph("cross")
                    .task("write", ElementwiseKernels::scale, a, 0.5f)
                    .task("read", ElementwiseKernels::sumInto, b, a)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(devices.get(0)).withDevice("read", devices.get(1))) {
                assertThrows(IllegalArgumentException.class, plan::execute);
            }
        }
    }
}
