package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.AbstractDeviceBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Device memory of a {@link JvmDevice}: an off-heap segment, with its own arena when gradsync
 * allocated it ({@link JvmDevice#allocate}), or the caller's native segment ({@link JvmDevice#wrap}),
 * which gradsync neither copies nor frees.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class JvmBuffer extends AbstractDeviceBuffer<JvmDevice> {
    /** Null for a wrapped segment: its owner's arena frees it. */
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
    public long address() {
        return segment().address();
    }

    @Override
    public boolean isOwned() {
        return arena != null;
    }

    @Override
    protected void free() {
        if (arena != null) {
            arena.close();
        }
    }
}
