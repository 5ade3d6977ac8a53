package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;

/**
 * An off-heap array of IEEE binary16 (fp16) values.
 *
 * <p>{@link #get(int)} and {@link #set(int, float)} convert to and from fp32 (rounding to nearest
 * even), which is how kernels use it: load, compute in fp32, store. {@link #getBits(int)} and
 * {@link #setBits(int, short)} reach the raw 16-bit patterns.
 *
 * <p>Thread-safety: like a Java array, not synchronized: threads may read and write different elements at once; writes to one element from several threads, or a read racing a write, need the caller's ordering.
 */
public final class HalfArray extends SixteenBitFloatArray implements KernelArray {
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 2;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public HalfArray(int size) {
        super(size);
    }

    private HalfArray(MemorySegment segment) {
        super(segment);
    }

    /** A view of existing memory (for example a device runtime's buffer); closing it frees nothing. */
    public static HalfArray wrap(MemorySegment segment) {
        return new HalfArray(segment);
    }

    /** A new array holding {@code values}, each rounded to the nearest representable value. */
    public static HalfArray of(float... values) {
        HalfArray array = new HalfArray(values.length);
        for (int i = 0; i < values.length; i++) {
            array.set(i, values[i]);
        }
        return array;
    }

    @Override
    float widen(short bits) {
        return HalfFloats.halfToFloat(bits);
    }

    @Override
    short narrow(float value) {
        return HalfFloats.floatToHalf(value);
    }
}
