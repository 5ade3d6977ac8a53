package io.gradsync.sync;

/**
 * Averaging failed after the call had been accepted (a driver error, a device that failed, a
 * closed stream): names the backend, the replica and its device. The gradients of that call are
 * then undefined.
 *
 * <p>Thread-safety: immutable once thrown.
 */
public final class SyncFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int replica;
    private final String device;

    public SyncFailedException(SyncBackend backend, int replica, String device, Throwable cause) {
        super(backend.label() + ": averaging failed on " + (replica < 0 ? "one of the devices" : "replica " + replica + " (" + device + ")")
                + ": " + cause.getMessage(), cause);
        this.replica = replica;
        this.device = device;
    }

    /** The replica index (in the call's replica order) where it failed, or -1 when no single replica. */
    public int replica() {
        return replica;
    }

    /** The id of that replica's device, or null. */
    public String device() {
        return device;
    }
}
