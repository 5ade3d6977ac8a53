package io.gradsync.tasks.device;

import java.lang.foreign.MemorySegment;

/**
 * Host memory freed by a runtime-specific action, once.
 *
 * <p>Thread-safety: every method may be called from any thread; close frees once. The memory itself is not synchronized.
 */
public abstract class AbstractHostBuffer implements HostBuffer {
    private final MemorySegment segment;
    private final boolean pinned;
    private volatile boolean closed;

    protected AbstractHostBuffer(MemorySegment segment, boolean pinned) {
        this.segment = segment;
        this.pinned = pinned;
    }

    @Override
    public MemorySegment segment() {
        if (closed) {
            throw new IllegalStateException("host buffer is closed");
        }
        return segment;
    }

    @Override
    public boolean isPinned() {
        return pinned;
    }

    @Override
    public boolean isClosed() {
        return closed;
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
