package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.AbstractDeviceBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Device memory of a {@link JvmDevice}: an off-heap segment with its own arena. */
public final class JvmBuffer extends AbstractDeviceBuffer<JvmDevice> {
    private final Arena arena;
    private final MemorySegment segment;

    JvmBuffer(JvmDevice device, Arena arena, MemorySegment segment) {
        super(device, segment.byteSize());
        this.arena = arena;
        this.segment = segment;
    }

    /** The memory itself; kernels on the JVM runtime read and write it directly. */
    public MemorySegment segment() {
        checkOpen();
        return segment;
    }

    @Override
    protected void free() {
        arena.close();
    }
}
