package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.DeviceBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Device memory of a {@link JvmDevice}: an off-heap segment with its own arena. */
public final class JvmBuffer implements DeviceBuffer {
    private final JvmDevice device;
    private final Arena arena;
    private final MemorySegment segment;
    private volatile boolean closed;

    JvmBuffer(JvmDevice device, Arena arena, MemorySegment segment) {
        this.device = device;
        this.arena = arena;
        this.segment = segment;
    }

    @Override
    public JvmDevice device() {
        return device;
    }

    @Override
    public long byteSize() {
        return segment.byteSize();
    }

    /** The memory itself; kernels on the JVM runtime read and write it directly. */
    public MemorySegment segment() {
        if (closed) {
            throw new IllegalStateException("buffer on " + device.id() + " is closed");
        }
        return segment;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }
}
