package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.RuntimeStatus;
import java.util.ArrayList;
import java.util.List;

/**
 * Creates simulated devices; always available.
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
public final class JvmRuntime {
    private JvmRuntime() {
    }

    public static RuntimeStatus status() {
        return RuntimeStatus.available(DeviceRuntime.JVM, 0,
                "simulated in host memory, Java " + Runtime.version() + ", "
                        + Runtime.getRuntime().availableProcessors() + " cores");
    }

    /** {@code count} fresh devices, ordinals 0..count-1. The caller closes them. */
    public static List<JvmDevice> createDevices(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("device count must be at least 1, got " + count);
        }
        List<JvmDevice> devices = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            devices.add(new JvmDevice(i));
        }
        return List.copyOf(devices);
    }
}
