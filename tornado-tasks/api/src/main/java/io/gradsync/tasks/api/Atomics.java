package io.gradsync.tasks.api;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * Atomic operations on array elements, in kernels and on the JVM alike.
 *
 * <p>{@link #add(FloatArray, int, float)} and {@link #add(IntArray, int, int)} are relaxed,
 * device-wide adds for reductions ({@code red.global.add} in PTX, a compare-and-swap loop or
 * {@code atomic_add} in OpenCL C). The other methods name their {@link MemoryScope} and
 * {@link MemoryOrder}, which must be the enum constants themselves (a kernel's are fixed when it
 * is compiled): they are the building blocks of flags between threads, groups and GPUs. In PTX
 * they become {@code atom}, {@code ld} and {@code st} with that scope and order (sm_70 and
 * later); OpenCL C 1.2 has neither, so there they are relaxed atomics fenced before (release) and
 * after (acquire) with {@code mem_fence}, at device scope. On the JVM they are VarHandle
 * operations, at least as strong as asked.
 *
 * <p>Every read-modify-write returns the element's old value. Float operations work on the bits:
 * {@code compareAndExchange} compares bits (so it can find a NaN), {@code getAndMax} /
 * {@code getAndMin} store {@link Math#max} / {@link Math#min} of the old value and the operand.
 * The order of concurrent additions is not fixed, so float sums may differ in the last bits.
 *
 * <p>Thread-safety: every method is atomic with respect to the others on the same element.
 */
public final class Atomics {
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private Atomics() {
    }

    /** Atomically {@code array[index] += value}; relaxed, device scope. */
    public static void add(FloatArray array, int index, float value) {
        getAndAdd(array, index, value, MemoryScope.DEVICE, MemoryOrder.RELAXED);
    }

    /** Atomically {@code array[index] += value}; relaxed, device scope. */
    public static void add(IntArray array, int index, int value) {
        INT.getAndAdd(array.segment(), offset(index, array.getSize(), 4), value);
    }

    // ------------------------------------------------------------------ int

    public static int getAndAdd(IntArray a, int index, int value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return (int) INT.getAndAdd(a.segment(), offset(index, a.getSize(), 4), value);
    }

    public static int getAndMax(IntArray a, int index, int value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        long at = offset(index, a.getSize(), 4);
        while (true) {
            int old = (int) INT.getVolatile(a.segment(), at);
            if (old >= value || (boolean) INT.compareAndSet(a.segment(), at, old, value)) {
                return old;
            }
        }
    }

    public static int getAndMin(IntArray a, int index, int value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        long at = offset(index, a.getSize(), 4);
        while (true) {
            int old = (int) INT.getVolatile(a.segment(), at);
            if (old <= value || (boolean) INT.compareAndSet(a.segment(), at, old, value)) {
                return old;
            }
        }
    }

    public static int getAndSet(IntArray a, int index, int value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return (int) INT.getAndSet(a.segment(), offset(index, a.getSize(), 4), value);
    }

    /** Sets the element to {@code desired} if it is {@code expected}; returns what it was. */
    public static int compareAndExchange(IntArray a, int index, int expected, int desired, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return (int) INT.compareAndExchange(a.segment(), offset(index, a.getSize(), 4), expected, desired);
    }

    /** An atomic read; {@code order} RELAXED, ACQUIRE or SEQ_CST. */
    public static int load(IntArray a, int index, MemoryScope scope, MemoryOrder order) {
        check(scope, order, true, false);
        return (int) INT.getVolatile(a.segment(), offset(index, a.getSize(), 4));
    }

    /** An atomic write; {@code order} RELAXED, RELEASE or SEQ_CST. */
    public static void store(IntArray a, int index, int value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, true);
        INT.setVolatile(a.segment(), offset(index, a.getSize(), 4), value);
    }

    // ------------------------------------------------------------------ long

    public static long getAndAdd(LongArray a, int index, long value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return (long) LONG.getAndAdd(a.segment(), offset(index, a.getSize(), 8), value);
    }

    public static long getAndMax(LongArray a, int index, long value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        long at = offset(index, a.getSize(), 8);
        while (true) {
            long old = (long) LONG.getVolatile(a.segment(), at);
            if (old >= value || (boolean) LONG.compareAndSet(a.segment(), at, old, value)) {
                return old;
            }
        }
    }

    public static long getAndMin(LongArray a, int index, long value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        long at = offset(index, a.getSize(), 8);
        while (true) {
            long old = (long) LONG.getVolatile(a.segment(), at);
            if (old <= value || (boolean) LONG.compareAndSet(a.segment(), at, old, value)) {
                return old;
            }
        }
    }

    public static long getAndSet(LongArray a, int index, long value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return (long) LONG.getAndSet(a.segment(), offset(index, a.getSize(), 8), value);
    }

    public static long compareAndExchange(LongArray a, int index, long expected, long desired, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return (long) LONG.compareAndExchange(a.segment(), offset(index, a.getSize(), 8), expected, desired);
    }

    public static long load(LongArray a, int index, MemoryScope scope, MemoryOrder order) {
        check(scope, order, true, false);
        return (long) LONG.getVolatile(a.segment(), offset(index, a.getSize(), 8));
    }

    public static void store(LongArray a, int index, long value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, true);
        LONG.setVolatile(a.segment(), offset(index, a.getSize(), 8), value);
    }

    // ------------------------------------------------------------------ float (on the bits)

    public static float getAndAdd(FloatArray a, int index, float value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        long at = offset(index, a.getSize(), 4);
        while (true) {
            int old = (int) INT.getVolatile(a.segment(), at);
            int updated = Float.floatToRawIntBits(Float.intBitsToFloat(old) + value);
            if ((boolean) INT.compareAndSet(a.segment(), at, old, updated)) {
                return Float.intBitsToFloat(old);
            }
        }
    }

    public static float getAndMax(FloatArray a, int index, float value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return update(a, index, value, true);
    }

    public static float getAndMin(FloatArray a, int index, float value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return update(a, index, value, false);
    }

    private static float update(FloatArray a, int index, float value, boolean max) {
        long at = offset(index, a.getSize(), 4);
        while (true) {
            int old = (int) INT.getVolatile(a.segment(), at);
            float o = Float.intBitsToFloat(old);
            int updated = Float.floatToRawIntBits(max ? Math.max(o, value) : Math.min(o, value));
            if (updated == old || (boolean) INT.compareAndSet(a.segment(), at, old, updated)) {
                return o;
            }
        }
    }

    public static float getAndSet(FloatArray a, int index, float value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return Float.intBitsToFloat((int) INT.getAndSet(a.segment(), offset(index, a.getSize(), 4), Float.floatToRawIntBits(value)));
    }

    /** Compares bits: a NaN is found by the same NaN's bits. */
    public static float compareAndExchange(FloatArray a, int index, float expected, float desired, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, false);
        return Float.intBitsToFloat((int) INT.compareAndExchange(a.segment(), offset(index, a.getSize(), 4),
                Float.floatToRawIntBits(expected), Float.floatToRawIntBits(desired)));
    }

    public static float load(FloatArray a, int index, MemoryScope scope, MemoryOrder order) {
        check(scope, order, true, false);
        return Float.intBitsToFloat((int) INT.getVolatile(a.segment(), offset(index, a.getSize(), 4)));
    }

    public static void store(FloatArray a, int index, float value, MemoryScope scope, MemoryOrder order) {
        check(scope, order, false, true);
        INT.setVolatile(a.segment(), offset(index, a.getSize(), 4), Float.floatToRawIntBits(value));
    }

    // ------------------------------------------------------------------

    private static void check(MemoryScope scope, MemoryOrder order, boolean load, boolean store) {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(order, "order");
        if (load && (order == MemoryOrder.RELEASE || order == MemoryOrder.ACQ_REL)) {
            throw new IllegalArgumentException("an atomic load cannot be " + order + " (RELAXED, ACQUIRE or SEQ_CST)");
        }
        if (store && (order == MemoryOrder.ACQUIRE || order == MemoryOrder.ACQ_REL)) {
            throw new IllegalArgumentException("an atomic store cannot be " + order + " (RELAXED, RELEASE or SEQ_CST)");
        }
    }

    private static long offset(int index, int size, int bytes) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + " outside [0, " + size + ")");
        }
        return (long) index * bytes;
    }
}
