package io.gradsync.tasks.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What every array type shares: its segment, its element count, and the arena it frees when it
 * allocated its own memory. The typed subclasses add only typed element access.
 */
abstract class OffHeapArray {
    /** The elements; typed subclasses read and write it with their own layout. */
    protected final MemorySegment segment;
    private final Arena arena;
    private final int size;
    private final int elementBytes;

    /** Allocates {@code size} zeroed elements off-heap. */
    OffHeapArray(int size, int elementBytes) {
        this.arena = ArrayMemory.newArena();
        this.segment = ArrayMemory.allocate(arena, size, elementBytes).asSlice(0, (long) size * elementBytes);
        this.size = size;
        this.elementBytes = elementBytes;
    }

    /** A view of memory owned by someone else. */
    OffHeapArray(MemorySegment segment, int elementBytes) {
        this.arena = null;
        this.segment = segment;
        this.size = ArrayMemory.sizeOf(segment, elementBytes);
        this.elementBytes = elementBytes;
    }

    /** Number of elements. */
    public final int getSize() {
        return size;
    }

    /** Bytes per element. */
    public final int elementBytes() {
        return elementBytes;
    }

    /** The memory this array views. */
    public final MemorySegment segment() {
        return segment;
    }

    /** Frees the memory if this array allocated it; a view of foreign memory frees nothing. */
    public final void close() {
        if (arena != null) {
            arena.close();
        }
    }
}
