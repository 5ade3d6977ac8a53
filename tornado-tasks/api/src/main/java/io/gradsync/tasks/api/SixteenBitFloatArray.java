package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What the 16-bit float arrays share: elements stored as 16-bit patterns, read widened to fp32
 * and written rounded to nearest even. The subclasses say which 16-bit format. A kernel's helper
 * method may take this type to serve both: the compiler knows from the argument which it is.
 *
 * <p>Thread-safety: like a Java array, not synchronized: threads may read and write different elements at once; writes to one element from several threads, or a read racing a write, need the caller's ordering.
 */
public abstract sealed class SixteenBitFloatArray extends OffHeapArray permits Bfloat16Array, HalfArray {
    private static final ValueLayout.OfShort LAYOUT = ValueLayout.JAVA_SHORT;
    private static final int BYTES = 2;

    SixteenBitFloatArray(int size) {
        super(size, BYTES);
    }

    SixteenBitFloatArray(MemorySegment segment) {
        super(segment, BYTES);
    }

    /** The format's bits widened to fp32 (exact). */
    abstract float widen(short bits);

    /** fp32 rounded to the format, nearest even. */
    abstract short narrow(float value);

    /** The element widened to fp32 (exact). */
    public final float get(int index) {
        return widen(segment.getAtIndex(LAYOUT, index));
    }

    /** Stores {@code value} rounded to nearest even. */
    public final void set(int index, float value) {
        segment.setAtIndex(LAYOUT, index, narrow(value));
    }

    /** The raw 16-bit pattern of an element. */
    public final short getBits(int index) {
        return segment.getAtIndex(LAYOUT, index);
    }

    /** Stores a raw 16-bit pattern. */
    public final void setBits(int index, short bits) {
        segment.setAtIndex(LAYOUT, index, bits);
    }

    /** Sets every element to {@code value} (rounded once). */
    public final void fill(float value) {
        short bits = narrow(value);
        for (int i = 0; i < getSize(); i++) {
            setBits(i, bits);
        }
    }

    /** The elements widened to fp32, on the heap. */
    public final float[] toArray() {
        float[] copy = new float[getSize()];
        for (int i = 0; i < getSize(); i++) {
            copy[i] = get(i);
        }
        return copy;
    }
}
