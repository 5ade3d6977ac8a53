package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An off-heap array of int64 values.
 *
 * <p>Thread-safety: like a Java array, not synchronized: threads may read and write different elements at once; writes to one element from several threads, or a read racing a write, need the caller's ordering.
 */
public final class LongArray extends OffHeapArray implements KernelArray {
    private static final ValueLayout.OfLong LAYOUT = ValueLayout.JAVA_LONG;
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 8;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public LongArray(int size) {
        super(size, ELEMENT_BYTES);
    }

    private LongArray(MemorySegment segment) {
        super(segment, ELEMENT_BYTES);
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
        for (int i = 0; i < getSize(); i++) {
            set(i, value);
        }
    }

    /** A heap copy of the elements. */
    public long[] toArray() {
        long[] copy = new long[getSize()];
        for (int i = 0; i < getSize(); i++) {
            copy[i] = get(i);
        }
        return copy;
    }
}
