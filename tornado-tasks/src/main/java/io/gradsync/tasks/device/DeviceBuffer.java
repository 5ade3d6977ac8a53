package io.gradsync.tasks.device;

/** A block of device memory owned by one {@link Device}. Freed on close. */
public interface DeviceBuffer extends AutoCloseable {

    Device device();

    long byteSize();

    /** True once closed; a closed buffer must not be used. */
    boolean isClosed();

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
