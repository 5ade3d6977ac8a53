package io.gradsync.tasks.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** An off-heap array of fp32 values. */
public final class FloatArray implements KernelArray {
    private static final ValueLayout.OfFloat LAYOUT = ValueLayout.JAVA_FLOAT;
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 4;

    private final MemorySegment segment;
    private final Arena arena;
    private final int size;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public FloatArray(int size) {
        this.arena = ArrayMemory.newArena();
        this.segment = ArrayMemory.allocate(arena, size, ELEMENT_BYTES).asSlice(0, (long) size * ELEMENT_BYTES);
        this.size = size;
    }

    private FloatArray(MemorySegment segment) {
        this.arena = null;
        this.segment = segment;
        this.size = ArrayMemory.sizeOf(segment, ELEMENT_BYTES);
    }

    /** A view of existing memory (for example a device runtime's buffer); closing it frees nothing. */
    public static FloatArray wrap(MemorySegment segment) {
        return new FloatArray(segment);
    }

    /** A new array holding a copy of {@code values}. */
    public static FloatArray of(float... values) {
        FloatArray array = new FloatArray(values.length);
        for (int i = 0; i < values.length; i++) {
            array.set(i, values[i]);
        }
        return array;
    }

    public float get(int index) {
        return segment.getAtIndex(LAYOUT, index);
    }

    public void set(int index, float value) {
        segment.setAtIndex(LAYOUT, index, value);
    }

    /** Sets every element to {@code value}. */
    public void fill(float value) {
        for (int i = 0; i < size; i++) {
            set(i, value);
        }
    }

    /** A heap copy of the elements. */
    public float[] toArray() {
        float[] copy = new float[size];
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
