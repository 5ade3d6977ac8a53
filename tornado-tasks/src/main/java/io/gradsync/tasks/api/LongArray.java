package io.gradsync.tasks.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** An off-heap array of int64 values. */
public final class LongArray implements KernelArray {
    private static final ValueLayout.OfLong LAYOUT = ValueLayout.JAVA_LONG;
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 8;

    private final MemorySegment segment;
    private final Arena arena;
    private final int size;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public LongArray(int size) {
        this.arena = ArrayMemory.newArena();
        this.segment = ArrayMemory.allocate(arena, size, ELEMENT_BYTES).asSlice(0, (long) size * ELEMENT_BYTES);
        this.size = size;
    }

    private LongArray(MemorySegment segment) {
        this.arena = null;
        this.segment = segment;
        this.size = ArrayMemory.sizeOf(segment, ELEMENT_BYTES);
    }

    /** A view of existing memory (for example a device runtime's buffer); closing it frees nothing. */
    public static LongArray wrap(MemorySegment segment) {
        return new LongArray(segment);
    }

    /** A new array holding a copy of {@code values}. */
    public static LongArray of(long... values) {
        LongArray array = new LongArray(values.length);
        for (int i = 0; i < values.length; i++) {
            array.set(i, values[i]);
        }
        return array;
    }

    public long get(int index) {
        return segment.getAtIndex(LAYOUT, index);
    }

    public void set(int index, long value) {
        segment.setAtIndex(LAYOUT, index, value);
    }

    /** Sets every element to {@code value}. */
    public void fill(long value) {
        for (int i = 0; i < size; i++) {
            set(i, value);
        }
    }

    /** A heap copy of the elements. */
    public long[] toArray() {
        long[] copy = new long[size];
        for (int i = 0; i < size; i++) {
            copy[i] = get(i);
        }
        return copy;
    }

    @Override
    public int getSize() {
        return size;
    }

    @Override
    public int elementBytes() {
        return ELEMENT_BYTES;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public void close() {
        if (arena != null) {
            arena.close();
        }
    }
}
