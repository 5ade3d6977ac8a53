package io.gradsync.tasks.device;

/**
 * The three ways gradsync reaches a device.
 *
 * <p>Immutable: safe to share between threads.
 */
public enum DeviceRuntime {
    /** Simulated devices in host memory; the reference every other runtime is checked against. */
    JVM("jvm"),
    /** NVIDIA GPUs through the CUDA driver API (JCuda). */
    CUDA("cuda"),
    /** Any OpenCL platform (PoCL on CPUs, NVIDIA's OpenCL on GPUs) through JOCL. */
    OPENCL("opencl");

    private final String label;

    DeviceRuntime(String label) {
        this.label = label;
    }

    /** Lower-case name used in device ids ({@code cuda:0}) and on the command line. */
    public String label() {
        return label;
    }
}
