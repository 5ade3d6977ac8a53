package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.api.SixteenBitFloatArray;
import io.gradsync.tasks.kernels.internal.Quotients;

/**
 * The fused averages of 2..8 replicas for fp32, bf16 and fp16, written as plain Java: the JVM
 * implementation, the reference the device forms are tested against, and the source the compiler
 * translates to PTX and OpenCL C. JVM fast forms: {@link AverageJvmForm}; CUDA C reference:
 * {@code averages.cu} beside this class ({@link KernelFamily#AVERAGES}).
 *
 * <p>Every average sums in replica order in float64, divides by the replica count {@code k} and
 * rounds once to the element type: the same bits on every device and the host, finite wherever
 * the mean is representable. The division is {@link Quotients#divide} by the reciprocal taken
 * once per call: the division's own bits without a division per element, which costs a GPU more
 * than the rest of a 16-bit average.
 *
 * <p>{@code averageInPlace<k>} (and its bf16 and fp16 forms) writes the same average into every
 * input instead of into {@code out}: the ptx backend's small runs, where each GPU averages its
 * slice of every replica and writes it back into all of them in one kernel.
 *
 * <p>The sums are written once per element width ({@code sum}), for every arity: each kernel
 * passes its arity as a constant, and the compiler folds the terms past it and (its optimization
 * stage) the copies inlining leaves, so every kernel compiles as if its sum were written out.
 */
public final class AverageKernels {
    private AverageKernels() {
    }

    /**
     * The float64 sum of the first {@code n} inputs at {@code i}, in replica order: the one body of
     * every fp32 average. {@code n} is a constant at every call, so the compiler drops the terms past it.
     */
    private static double sum(int n, int i, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4,
                              FloatArray a5, FloatArray a6, FloatArray a7) {
        double s = (double) a0.get(i) + a1.get(i);
        s = n > 2 ? s + a2.get(i) : s;
        s = n > 3 ? s + a3.get(i) : s;
        s = n > 4 ? s + a4.get(i) : s;
        s = n > 5 ? s + a5.get(i) : s;
        s = n > 6 ? s + a6.get(i) : s;
        return n > 7 ? s + a7.get(i) : s;
    }

    /** As {@link #sum(int, int, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray)}: the one body of every bf16 and fp16 average. */
    private static double sum(int n, int i, SixteenBitFloatArray a0, SixteenBitFloatArray a1, SixteenBitFloatArray a2,
                              SixteenBitFloatArray a3, SixteenBitFloatArray a4, SixteenBitFloatArray a5, SixteenBitFloatArray a6,
                              SixteenBitFloatArray a7) {
        double s = (double) a0.get(i) + a1.get(i);
        s = n > 2 ? s + a2.get(i) : s;
        s = n > 3 ? s + a3.get(i) : s;
        s = n > 4 ? s + a4.get(i) : s;
        s = n > 5 ? s + a5.get(i) : s;
        s = n > 6 ? s + a6.get(i) : s;
        return n > 7 ? s + a7.get(i) : s;
    }

    /**
     * Stores {@code m} at {@code i} into the first {@code n} arrays: the one store of every in-place
     * fp32 average; {@code n} is a constant at every call, as for {@code sum}.
     */
    private static void storeAll(int n, int i, float m, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4,
                                 FloatArray a5, FloatArray a6, FloatArray a7) {
        a0.set(i, m);
        a1.set(i, m);
        if (n > 2) {
            a2.set(i, m);
        }
        if (n > 3) {
            a3.set(i, m);
        }
        if (n > 4) {
            a4.set(i, m);
        }
        if (n > 5) {
            a5.set(i, m);
        }
        if (n > 6) {
            a6.set(i, m);
        }
        if (n > 7) {
            a7.set(i, m);
        }
    }

    /** As {@link #storeAll(int, int, float, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray)}, for bf16 and fp16 (each rounds {@code m} to its type). */
    private static void storeAll(int n, int i, float m, SixteenBitFloatArray a0, SixteenBitFloatArray a1, SixteenBitFloatArray a2,
                                 SixteenBitFloatArray a3, SixteenBitFloatArray a4, SixteenBitFloatArray a5, SixteenBitFloatArray a6,
                                 SixteenBitFloatArray a7) {
        a0.set(i, m);
        a1.set(i, m);
        if (n > 2) {
            a2.set(i, m);
        }
        if (n > 3) {
            a3.set(i, m);
        }
        if (n > 4) {
            a4.set(i, m);
        }
        if (n > 5) {
            a5.set(i, m);
        }
        if (n > 6) {
            a6.set(i, m);
        }
        if (n > 7) {
            a7.set(i, m);
        }
    }

    /**
     * Average of 2 inputs: the float64 sum {@code a0[i] + ... + a1[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average2(FloatArray out, FloatArray a0, FloatArray a1, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) Quotients.divide(sum(2, i, a0, a1, a0, a0, a0, a0, a0, a0), k, r));
        }
    }

    /**
     * Average of 3 inputs: the float64 sum {@code a0[i] + ... + a2[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average3(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) Quotients.divide(sum(3, i, a0, a1, a2, a0, a0, a0, a0, a0), k, r));
        }
    }

    /**
     * Average of 4 inputs: the float64 sum {@code a0[i] + ... + a3[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average4(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) Quotients.divide(sum(4, i, a0, a1, a2, a3, a0, a0, a0, a0), k, r));
        }
    }

    /**
     * Average of 5 inputs: the float64 sum {@code a0[i] + ... + a4[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average5(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) Quotients.divide(sum(5, i, a0, a1, a2, a3, a4, a0, a0, a0), k, r));
        }
    }

    /**
     * Average of 6 inputs: the float64 sum {@code a0[i] + ... + a5[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average6(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) Quotients.divide(sum(6, i, a0, a1, a2, a3, a4, a5, a0, a0), k, r));
        }
    }

    /**
     * Average of 7 inputs: the float64 sum {@code a0[i] + ... + a6[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average7(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, FloatArray a6, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) Quotients.divide(sum(7, i, a0, a1, a2, a3, a4, a5, a6, a0), k, r));
        }
    }

    /**
     * Average of 8 inputs: the float64 sum {@code a0[i] + ... + a7[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average8(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, FloatArray a6, FloatArray a7, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) Quotients.divide(sum(8, i, a0, a1, a2, a3, a4, a5, a6, a7), k, r));
        }
    }

    /**
     * Average of 2 inputs: the float64 sum {@code a0[i] + ... + a1[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average2Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(2, i, a0, a1, a0, a0, a0, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 3 inputs: the float64 sum {@code a0[i] + ... + a2[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average3Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(3, i, a0, a1, a2, a0, a0, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 4 inputs: the float64 sum {@code a0[i] + ... + a3[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average4Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(4, i, a0, a1, a2, a3, a0, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 5 inputs: the float64 sum {@code a0[i] + ... + a4[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average5Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(5, i, a0, a1, a2, a3, a4, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 6 inputs: the float64 sum {@code a0[i] + ... + a5[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average6Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(6, i, a0, a1, a2, a3, a4, a5, a0, a0), k, r)));
        }
    }

    /**
     * Average of 7 inputs: the float64 sum {@code a0[i] + ... + a6[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average7Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, Bfloat16Array a6, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(7, i, a0, a1, a2, a3, a4, a5, a6, a0), k, r)));
        }
    }

    /**
     * Average of 8 inputs: the float64 sum {@code a0[i] + ... + a7[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average8Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, Bfloat16Array a6, Bfloat16Array a7, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(8, i, a0, a1, a2, a3, a4, a5, a6, a7), k, r)));
        }
    }

    /**
     * Average of 2 inputs: the float64 sum {@code a0[i] + ... + a1[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average2F16(HalfArray out, HalfArray a0, HalfArray a1, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(2, i, a0, a1, a0, a0, a0, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 3 inputs: the float64 sum {@code a0[i] + ... + a2[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average3F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(3, i, a0, a1, a2, a0, a0, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 4 inputs: the float64 sum {@code a0[i] + ... + a3[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average4F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(4, i, a0, a1, a2, a3, a0, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 5 inputs: the float64 sum {@code a0[i] + ... + a4[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average5F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(5, i, a0, a1, a2, a3, a4, a0, a0, a0), k, r)));
        }
    }

    /**
     * Average of 6 inputs: the float64 sum {@code a0[i] + ... + a5[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average6F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(6, i, a0, a1, a2, a3, a4, a5, a0, a0), k, r)));
        }
    }

    /**
     * Average of 7 inputs: the float64 sum {@code a0[i] + ... + a6[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average7F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, HalfArray a6, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(7, i, a0, a1, a2, a3, a4, a5, a6, a0), k, r)));
        }
    }

    /**
     * Average of 8 inputs: the float64 sum {@code a0[i] + ... + a7[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average8F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, HalfArray a6, HalfArray a7, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(Quotients.divide(sum(8, i, a0, a1, a2, a3, a4, a5, a6, a7), k, r)));
        }
    }

    /** {@link #average2} written into every input: each of {@code a0 .. a1} ends with the average. */
    public static void averageInPlace2(FloatArray a0, FloatArray a1, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(2, i, (float) Quotients.divide(sum(2, i, a0, a1, a0, a0, a0, a0, a0, a0), k, r), a0, a1, a0, a0, a0, a0, a0, a0);
        }
    }

    /** {@link #average3} written into every input: each of {@code a0 .. a2} ends with the average. */
    public static void averageInPlace3(FloatArray a0, FloatArray a1, FloatArray a2, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(3, i, (float) Quotients.divide(sum(3, i, a0, a1, a2, a0, a0, a0, a0, a0), k, r), a0, a1, a2, a0, a0, a0, a0, a0);
        }
    }

    /** {@link #average4} written into every input: each of {@code a0 .. a3} ends with the average. */
    public static void averageInPlace4(FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(4, i, (float) Quotients.divide(sum(4, i, a0, a1, a2, a3, a0, a0, a0, a0), k, r), a0, a1, a2, a3, a0, a0, a0, a0);
        }
    }

    /** {@link #average5} written into every input: each of {@code a0 .. a4} ends with the average. */
    public static void averageInPlace5(FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(5, i, (float) Quotients.divide(sum(5, i, a0, a1, a2, a3, a4, a0, a0, a0), k, r), a0, a1, a2, a3, a4, a0, a0, a0);
        }
    }

    /** {@link #average6} written into every input: each of {@code a0 .. a5} ends with the average. */
    public static void averageInPlace6(FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(6, i, (float) Quotients.divide(sum(6, i, a0, a1, a2, a3, a4, a5, a0, a0), k, r), a0, a1, a2, a3, a4, a5, a0, a0);
        }
    }

    /** {@link #average7} written into every input: each of {@code a0 .. a6} ends with the average. */
    public static void averageInPlace7(FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, FloatArray a6, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(7, i, (float) Quotients.divide(sum(7, i, a0, a1, a2, a3, a4, a5, a6, a0), k, r), a0, a1, a2, a3, a4, a5, a6, a0);
        }
    }

    /** {@link #average8} written into every input: each of {@code a0 .. a7} ends with the average. */
    public static void averageInPlace8(FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, FloatArray a6, FloatArray a7, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(8, i, (float) Quotients.divide(sum(8, i, a0, a1, a2, a3, a4, a5, a6, a7), k, r), a0, a1, a2, a3, a4, a5, a6, a7);
        }
    }

    /** {@link #average2Bf16} written into every input: each of {@code a0 .. a1} ends with the average. */
    public static void averageInPlace2Bf16(Bfloat16Array a0, Bfloat16Array a1, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(2, i, HalfFloats.roundToOdd(Quotients.divide(sum(2, i, a0, a1, a0, a0, a0, a0, a0, a0), k, r)), a0, a1, a0, a0, a0, a0, a0, a0);
        }
    }

    /** {@link #average3Bf16} written into every input: each of {@code a0 .. a2} ends with the average. */
    public static void averageInPlace3Bf16(Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(3, i, HalfFloats.roundToOdd(Quotients.divide(sum(3, i, a0, a1, a2, a0, a0, a0, a0, a0), k, r)), a0, a1, a2, a0, a0, a0, a0, a0);
        }
    }

    /** {@link #average4Bf16} written into every input: each of {@code a0 .. a3} ends with the average. */
    public static void averageInPlace4Bf16(Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(4, i, HalfFloats.roundToOdd(Quotients.divide(sum(4, i, a0, a1, a2, a3, a0, a0, a0, a0), k, r)), a0, a1, a2, a3, a0, a0, a0, a0);
        }
    }

    /** {@link #average5Bf16} written into every input: each of {@code a0 .. a4} ends with the average. */
    public static void averageInPlace5Bf16(Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(5, i, HalfFloats.roundToOdd(Quotients.divide(sum(5, i, a0, a1, a2, a3, a4, a0, a0, a0), k, r)), a0, a1, a2, a3, a4, a0, a0, a0);
        }
    }

    /** {@link #average6Bf16} written into every input: each of {@code a0 .. a5} ends with the average. */
    public static void averageInPlace6Bf16(Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(6, i, HalfFloats.roundToOdd(Quotients.divide(sum(6, i, a0, a1, a2, a3, a4, a5, a0, a0), k, r)), a0, a1, a2, a3, a4, a5, a0, a0);
        }
    }

    /** {@link #average7Bf16} written into every input: each of {@code a0 .. a6} ends with the average. */
    public static void averageInPlace7Bf16(Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, Bfloat16Array a6, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(7, i, HalfFloats.roundToOdd(Quotients.divide(sum(7, i, a0, a1, a2, a3, a4, a5, a6, a0), k, r)), a0, a1, a2, a3, a4, a5, a6, a0);
        }
    }

    /** {@link #average8Bf16} written into every input: each of {@code a0 .. a7} ends with the average. */
    public static void averageInPlace8Bf16(Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, Bfloat16Array a6, Bfloat16Array a7, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(8, i, HalfFloats.roundToOdd(Quotients.divide(sum(8, i, a0, a1, a2, a3, a4, a5, a6, a7), k, r)), a0, a1, a2, a3, a4, a5, a6, a7);
        }
    }

    /** {@link #average2F16} written into every input: each of {@code a0 .. a1} ends with the average. */
    public static void averageInPlace2F16(HalfArray a0, HalfArray a1, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(2, i, HalfFloats.roundToOdd(Quotients.divide(sum(2, i, a0, a1, a0, a0, a0, a0, a0, a0), k, r)), a0, a1, a0, a0, a0, a0, a0, a0);
        }
    }

    /** {@link #average3F16} written into every input: each of {@code a0 .. a2} ends with the average. */
    public static void averageInPlace3F16(HalfArray a0, HalfArray a1, HalfArray a2, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(3, i, HalfFloats.roundToOdd(Quotients.divide(sum(3, i, a0, a1, a2, a0, a0, a0, a0, a0), k, r)), a0, a1, a2, a0, a0, a0, a0, a0);
        }
    }

    /** {@link #average4F16} written into every input: each of {@code a0 .. a3} ends with the average. */
    public static void averageInPlace4F16(HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(4, i, HalfFloats.roundToOdd(Quotients.divide(sum(4, i, a0, a1, a2, a3, a0, a0, a0, a0), k, r)), a0, a1, a2, a3, a0, a0, a0, a0);
        }
    }

    /** {@link #average5F16} written into every input: each of {@code a0 .. a4} ends with the average. */
    public static void averageInPlace5F16(HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(5, i, HalfFloats.roundToOdd(Quotients.divide(sum(5, i, a0, a1, a2, a3, a4, a0, a0, a0), k, r)), a0, a1, a2, a3, a4, a0, a0, a0);
        }
    }

    /** {@link #average6F16} written into every input: each of {@code a0 .. a5} ends with the average. */
    public static void averageInPlace6F16(HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(6, i, HalfFloats.roundToOdd(Quotients.divide(sum(6, i, a0, a1, a2, a3, a4, a5, a0, a0), k, r)), a0, a1, a2, a3, a4, a5, a0, a0);
        }
    }

    /** {@link #average7F16} written into every input: each of {@code a0 .. a6} ends with the average. */
    public static void averageInPlace7F16(HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, HalfArray a6, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(7, i, HalfFloats.roundToOdd(Quotients.divide(sum(7, i, a0, a1, a2, a3, a4, a5, a6, a0), k, r)), a0, a1, a2, a3, a4, a5, a6, a0);
        }
    }

    /** {@link #average8F16} written into every input: each of {@code a0 .. a7} ends with the average. */
    public static void averageInPlace8F16(HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, HalfArray a6, HalfArray a7, float k) {
        double r = 1.0 / k;
        for (@Parallel int i = 0; i < a0.getSize(); i++) {
            storeAll(8, i, HalfFloats.roundToOdd(Quotients.divide(sum(8, i, a0, a1, a2, a3, a4, a5, a6, a7), k, r)), a0, a1, a2, a3, a4, a5, a6, a7);
        }
    }
}
