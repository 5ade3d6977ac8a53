package io.gradsync.tasks.device;

import java.lang.management.ManagementFactory;

/**
 * This machine's physical memory: where JVM devices and pinned staging live, and what a request
 * for them is checked against before anything is allocated.
 *
 * <p>Thread-safety: stateless, callable from any thread.
 */
public final class HostMemory {
    private HostMemory() {
    }

    /** Total physical memory in bytes (the JVM's own limit where the platform does not say). */
    public static long totalBytes() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Runtime.getRuntime().maxMemory();
    }
}
