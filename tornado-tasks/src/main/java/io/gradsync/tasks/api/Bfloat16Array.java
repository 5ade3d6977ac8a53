package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An off-heap array of bfloat16 values.
 *
 * <p>{@link #get(int)} and {@link #set(int, float)} convert to and from fp32 (rounding to nearest
 * even), which is how kernels use it: load, compute in fp32, store. {@link #getBits(int)} and
 * {@link #setBits(int, short)} reach the raw 16-bit patterns.
 */
public final class Bfloat16Array extends OffHeapArray implements KernelArray {
    private static final ValueLayout.OfShort LAYOUT = ValueLayout.JAVA_SHORT;
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 2;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public Bfloat16Array(int size) {
        super(size, ELEMENT_BYTES);
    }

    private Bfloat16Array(MemorySegment segment) {
        super(segment, ELEMENT_BYTES);
    }

    /** A view of existing memory (for example a device runtime's buffer); closing it frees nothing. */
    public static Bfloat16Array wrap(MemorySegment segment) {
        return new Bfloat16Array(segment);
    }

    /** A new array holding {@code values}, each rounded to the nearest representable value. */
    public static Bfloat16Array of(float... values) {
        Bfloat16Array array = new Bfloat16Array(values.length);
        for (int i = 0; i < values.length; i++) {
            array.set(i, values[i]);
        }
        return array;
    }

    /** The element widened to fp32 (exact). */
    public float get(int index) {
        return HalfFloats.bf16ToFloat(segment.getAtIndex(LAYOUT, index));
    }

    /** Stores {@code value} rounded to nearest even. */
    public void set(int index, float value) {
        segment.setAtIndex(LAYOUT, index, HalfFloats.floatToBf16(value));
    }

    /** The raw 16-bit pattern of an element. */
    public short getBits(int index) {
        return segment.getAtIndex(LAYOUT, index);
    }

    /** Stores a raw 16-bit pattern. */
    public void setBits(int index, short bits) {
        segment.setAtIndex(LAYOUT, index, bits);
    }

    /** Sets every element to {@code value} (rounded once). */
    public void fill(float value) {
        short bits = HalfFloats.floatToBf16(value);
        for (int i = 0; i < getSize(); i++) {
            setBits(i, bits);
        }
    }

    /** The elements widened to fp32, on the heap. */
    public float[] toArray() {
        float[] copy = new float[getSize()];
        for (int i = 0; i < getSize(); i++) {
            copy[i] = get(i);
        }
        return copy;
    }
}
