package io.gradsync.tasks.device;

/**
 * Whether a runtime can be used on this machine, and if not, why (one line a user can act on,
 * such as "libcuda.so.1 not found").
 *
 * <p>Immutable: safe to share between threads.
 */
public record RuntimeStatus(DeviceRuntime runtime, boolean available, int deviceCount, String detail) {

    public static RuntimeStatus available(DeviceRuntime runtime, int deviceCount, String detail) {
        return new RuntimeStatus(runtime, true, deviceCount, detail);
    }

    public static RuntimeStatus unavailable(DeviceRuntime runtime, String reason) {
        return new RuntimeStatus(runtime, false, 0, reason);
    }

    /** One line for listings: {@code cuda: 4 devices (driver 13.0)} or {@code cuda: unavailable: reason}. */
    public String describe() {
        String count = runtime == DeviceRuntime.JVM ? "any number of devices"
                : deviceCount + (deviceCount == 1 ? " device" : " devices");
        return available
                ? runtime.label() + ": " + count
                        + (detail.isEmpty() ? "" : " (" + detail + ")")
                : runtime.label() + ": unavailable: " + detail;
    }
}
