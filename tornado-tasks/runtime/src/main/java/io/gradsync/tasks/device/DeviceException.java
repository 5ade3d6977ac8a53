package io.gradsync.tasks.device;

/**
 * A runtime call failed: names the call, the device and the runtime's own text for the code.
 *
 * <p>Thread-safety: immutable once thrown.
 */
public final class DeviceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int code;

    public DeviceException(String call, String device, int code, String codeText) {
        super(call + " failed on " + device + ": " + codeText + " (" + code + ")");
        this.code = code;
    }

    public DeviceException(String message, Throwable cause) {
        super(message, cause);
        this.code = 0;
    }

    /** The runtime's numeric error code, 0 when the failure had none. */
    public int code() {
        return code;
    }
}
