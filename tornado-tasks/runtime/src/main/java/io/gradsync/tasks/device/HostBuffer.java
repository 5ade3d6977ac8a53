package io.gradsync.tasks.device;

import java.lang.foreign.MemorySegment;

/**
 * Host memory a device copies to and from. On CUDA it is page-locked (pinned), which is what
 * lets copies run at full link speed and asynchronously; elsewhere it is ordinary off-heap memory.
 *
 * <p>Thread-safety: every method may be called from any thread; the memory itself is not synchronized (order host writes against the copies that read them).
 */
public interface HostBuffer extends AutoCloseable {

    /** The memory, valid until close. */
    MemorySegment segment();

    default long byteSize() {
        return segment().byteSize();
    }

    /** True when the memory is page-locked for the device's DMA engines. */
    boolean isPinned();

    boolean isClosed();

    @Override
    void close();

    default void checkRange(long offset, long bytes, String what) {
        Ranges.check(offset, bytes, byteSize(), what);
        if (isClosed()) {
            throw new IllegalStateException(what + ": host buffer is closed");
        }
    }
}
