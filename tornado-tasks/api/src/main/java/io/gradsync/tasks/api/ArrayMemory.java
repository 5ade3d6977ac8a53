package io.gradsync.tasks.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Allocation and validation shared by the array types (package private). */
final class ArrayMemory {
    /** Arrays allocate 64-byte aligned memory: a cache line, and enough for vector loads. */
    static final long ALIGNMENT = 64;

    private ArrayMemory() {
    }

    static Arena newArena() {
        return Arena.ofShared();
    }

    static MemorySegment allocate(Arena arena, int size, int elementBytes) {
        if (size < 0) {
            throw new IllegalArgumentException("negative array size " + size);
        }
        return arena.allocate(Math.max(1L, (long) size * elementBytes), ALIGNMENT);
    }

    static int sizeOf(MemorySegment segment, int elementBytes) {
        long bytes = segment.byteSize();
        if (bytes % elementBytes != 0) {
            throw new IllegalArgumentException("segment of " + bytes + " bytes is not a whole number of " + elementBytes + "-byte elements");
        }
        if (segment.address() % elementBytes != 0) {
            throw new IllegalArgumentException("segment address " + segment.address() + " is not " + elementBytes + "-byte aligned");
        }
        long size = bytes / elementBytes;
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("segment holds " + size + " elements, more than an int index reaches");
        }
        return (int) size;
    }
}
