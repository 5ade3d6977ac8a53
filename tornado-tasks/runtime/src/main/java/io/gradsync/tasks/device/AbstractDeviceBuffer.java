package io.gradsync.tasks.device;

/**
 * What every runtime's buffer shares: its device, its size, and a close that frees the memory
 * once. Subclasses hold the runtime's handle and say how to free it.
 *
 * @param <D> the runtime's device type, so that {@link #device()} needs no cast
 *
 * <p>Thread-safety: every method may be called from any thread; close frees once.
 */
public abstract class AbstractDeviceBuffer<D extends Device> implements DeviceBuffer {
    private final D device;
    private final long bytes;
    private volatile boolean closed;

    protected AbstractDeviceBuffer(D device, long bytes) {
        this.device = device;
        this.bytes = bytes;
    }

    @Override
    public final D device() {
        return device;
    }

    @Override
    public final long byteSize() {
        return bytes;
    }

    @Override
    public final boolean isClosed() {
        return closed;
    }

    /** Throws when closed; call before handing out the runtime's handle. */
    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException("buffer on " + device.id() + " is closed");
        }
    }

    @Override
    public final synchronized void close() {
        if (!closed) {
            closed = true;
            free();
        }
    }

    /** Releases the memory; called once. */
    protected abstract void free();
}
