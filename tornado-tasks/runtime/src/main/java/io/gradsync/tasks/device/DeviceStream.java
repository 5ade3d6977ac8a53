package io.gradsync.tasks.device;

/**
 * An ordered queue of work on one device. Every call returns as soon as the work is queued;
 * {@link #record()} and {@link #synchronize()} observe completion. Ranges are checked before
 * anything is queued.
 *
 * <p>Thread-safety: every method may be called from any thread; work queued from several threads
 * at once runs in the order the calls took effect.
 */
public interface DeviceStream extends AutoCloseable {

    Device device();

    /** Device to host copy of {@code bytes} bytes. */
    void copyToHost(DeviceBuffer src, long srcOffset, HostBuffer dst, long dstOffset, long bytes);

    /** Host to device copy of {@code bytes} bytes. */
    void copyFromHost(HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes);

    /**
     * Device to device copy; {@code src} may live on another device of the same runtime
     * (a peer copy on CUDA, staged through the host where the runtime has no peer path).
     */
    void copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes);

    /** Fills {@code bytes} bytes at {@code offset} with the 32-bit pattern {@code value}. */
    void fill32(DeviceBuffer dst, long offset, long bytes, int value);

    /** Marks the current end of the stream in {@code event} (one of this device's), replacing any earlier mark. */
    void record(DeviceEvent event);

    /** Marks the current end of the stream in a new event; the event completes when all work before it has. */
    default DeviceEvent record() {
        DeviceEvent event = device().createEvent();
        record(event);
        return event;
    }

    /** Makes later work on this stream wait for {@code event}, without blocking the caller. */
    void waitFor(DeviceEvent event);

    /**
     * Makes later work on this stream wait until {@code flag} (one of this device's) reaches
     * {@code value}, without blocking the caller. A flag that is never raised leaves the stream
     * waiting for ever: raise it on every path, failures included.
     *
     * @throws UnsupportedOperationException where the runtime cannot wait for the host on the device
     */
    default void waitUntil(HostFlag flag, int value) {
        throw new UnsupportedOperationException(device().runtime().label() + " streams cannot wait for host flags");
    }

    /** Blocks until all queued work has finished. */
    void synchronize();

    /** True once closed; a closed stream takes no more work. */
    boolean isClosed();

    @Override
    void close();
}
