package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An off-heap array of fp64 values (per-thread partial sums, host-side results).
 *
 * <p>Thread-safety: like a Java array, not synchronized: threads may read and write different elements at once; writes to one element from several threads, or a read racing a write, need the caller's ordering.
 */
public final class DoubleArray extends OffHeapArray implements KernelArray {
    private static final ValueLayout.OfDouble LAYOUT = ValueLayout.JAVA_DOUBLE;
    /** Bytes per element. */
    public static final int ELEMENT_BYTES = 8;

    /** Allocates {@code size} zeroed elements off-heap; {@link #close()} frees them. */
    public DoubleArray(int size) {
        super(size, ELEMENT_BYTES);
    }

    private DoubleArray(MemorySegment segment) {
        super(segment, ELEMENT_BYTES);
    }

    /** A view of existing memory (for example a device runtime's buffer); closing it frees nothing. */
    public static DoubleArray wrap(MemorySegment segment) {
        return new DoubleArray(segment);
    }

    /** A new array holding a copy of {@code values}. */
    public static DoubleArray of(double... values) {
        DoubleArray array = new DoubleArray(values.length);
        for (int i = 0; i < values.length; i++) {
            array.set(i, values[i]);
        }
        return array;
    }

    public double get(int index) {
        return segment.getAtIndex(LAYOUT, index);
    }

    public void set(int index, double value) {
        segment.setAtIndex(LAYOUT, index, value);
    }

    /** Sets every element to {@code value}. */
    public void fill(double value) {
        for (int i = 0; i < getSize(); i++) {
            set(i, value);
        }
    }

    /** A heap copy of the elements. */
    public double[] toArray() {
        double[] copy = new double[getSize()];
        for (int i = 0; i < getSize(); i++) {
            copy[i] = get(i);
        }
        return copy;
    }
}
