package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;

/**
 * An off-heap array of bfloat16 values.
 *
 * <p>{@link #get(int)} and {@link #set(int, float)} convert to and from fp32 (rounding to nearest
 * even), which is how kernels use it: load, compute in fp32, store. {@link #getBits(int)} and
 * {@link #setBits(int, short)} reach the raw 16-bit patterns.
 *
 * <p>Thread-safety: like a Java array, not synchronized: threads may read and write different elements at once; writes to one element from several threads, or a read racing a write, need the caller's ordering.
 */
public final class Bfloat16Array extends SixteenBitFloatArray implements KernelArray {
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 2;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public Bfloat16Array(int size) {
        super(size);
    }

    private Bfloat16Array(MemorySegment segment) {
        super(segment);
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

    @Override
    float widen(short bits) {
        return HalfFloats.bf16ToFloat(bits);
    }

    @Override
    short narrow(float value) {
        return HalfFloats.floatToBf16(value);
    }
}
