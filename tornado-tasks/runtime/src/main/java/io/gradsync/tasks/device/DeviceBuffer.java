package io.gradsync.tasks.device;

/**
 * A block of device memory of one {@link Device}: allocated by gradsync ({@link Device#allocate},
 * freed on close) or wrapped around memory the caller owns ({@code CudaDevice.wrap},
 * {@code JvmDevice.wrap}: closing forgets it, never frees it).
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public interface DeviceBuffer extends AutoCloseable {

    Device device();

    long byteSize();

    /** True once closed; a closed buffer must not be used. */
    boolean isClosed();

    /** True when gradsync allocated this memory and frees it on close; false for wrapped memory. */
    default boolean isOwned() {
        return true;
    }

    /**
     * The address of the buffer's first byte as the device sees it: a CUDA device pointer, or on
     * JVM devices the native address of the buffer's segment. A framework writes gradients there
     * directly (at a gradient's {@code byteOffset}).
     *
     * @throws UnsupportedOperationException on runtimes whose memory has no address (OpenCL)
     * @throws IllegalStateException when the buffer is closed
     */
    default long address() {
        throw new UnsupportedOperationException(device().runtime().label() + " buffers have no device address");
    }

    /** Frees the memory if gradsync owns it; wrapped memory is only let go of. Idempotent. */
    @Override
    void close();

    /** Throws when {@code [offset, offset + bytes)} is not inside this buffer. */
    default void checkRange(long offset, long bytes, String what) {
        Ranges.check(offset, bytes, byteSize(), what);
        if (isClosed()) {
            throw new IllegalStateException(what + ": buffer on " + device().id() + " is closed");
        }
    }
}
