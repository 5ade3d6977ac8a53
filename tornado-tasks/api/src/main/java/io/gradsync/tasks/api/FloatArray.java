package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An off-heap array of fp32 values.
 *
 * <p>Thread-safety: like a Java array, not synchronized: threads may read and write different elements at once; writes to one element from several threads, or a read racing a write, need the caller's ordering.
 */
public final class FloatArray extends OffHeapArray implements KernelArray {
    private static final ValueLayout.OfFloat LAYOUT = ValueLayout.JAVA_FLOAT;
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 4;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public FloatArray(int size) {
        super(size, ELEMENT_BYTES);
    }

    private FloatArray(MemorySegment segment) {
        super(segment, ELEMENT_BYTES);
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
        for (int i = 0; i < getSize(); i++) {
            set(i, value);
        }
    }

    /** A heap copy of the elements. */
    public float[] toArray() {
        float[] copy = new float[getSize()];
        for (int i = 0; i < getSize(); i++) {
            copy[i] = get(i);
        }
        return copy;
    }
}
