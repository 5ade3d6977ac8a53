package io.gradsync.tasks.api;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Atomic read-modify-write on array elements, for reductions where many threads add into one
 * element. On a device these become the hardware's atomic add ({@code red.global.add.f32} in PTX,
 * a compare-and-swap loop in OpenCL C); on the JVM a compare-and-swap loop on the element's bits.
 * The order of the additions is not fixed, so float results may differ in the last bits.
 */
public final class Atomics {
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private Atomics() {
    }

    /** Atomically {@code array[index] += value}. */
    public static void add(FloatArray array, int index, float value) {
        long offset = checkedOffset(index, array.getSize());
        while (true) {
            int old = (int) INT.getVolatile(array.segment(), offset);
            int updated = Float.floatToRawIntBits(Float.intBitsToFloat(old) + value);
            if ((boolean) INT.compareAndSet(array.segment(), offset, old, updated)) {
                return;
            }
        }
    }

    /** Atomically {@code array[index] += value}. */
    public static void add(IntArray array, int index, int value) {
        INT.getAndAdd(array.segment(), checkedOffset(index, array.getSize()), value);
    }

    private static long checkedOffset(int index, int size) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + " outside [0, " + size + ")");
        }
        return (long) index * Integer.BYTES;
    }
}
