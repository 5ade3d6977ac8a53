package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.Parallel;

/**
 * The fused averages of 2..8 replicas for fp32, bf16 and fp16, written as plain Java: the JVM
 * implementation, the reference the device forms are tested against, and the source the compiler
 * translates to PTX and OpenCL C. JVM fast forms: {@link AverageJvmForm}; CUDA C reference:
 * {@code averages.cu} beside this class ({@link KernelFamily#AVERAGES}).
 *
 * <p>Every average sums in replica order in float64, divides by the replica count {@code k} and
 * rounds once to the element type: the same bits on every device and the host, finite wherever
 * the mean is representable.
 *
 * <p>Why one body per kernel, not one sum for every arity: a sum helper called with the arity as
 * a constant does fold (the compiler drops the additions past it), but inlining it costs the loop
 * code: the index passed to it, its running sum and its result each become a copy ({@code mov} in
 * PTX, an assignment in OpenCL C), and each folded branch leaves an empty block behind. The
 * generated kernels must stay as they are, so the sums are written out.
 */
public final class AverageKernels {
    private AverageKernels() {
    }

    /**
     * Average of 2 inputs: the float64 sum {@code a0[i] + ... + a1[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average2(FloatArray out, FloatArray a0, FloatArray a1, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) (((double) a0.get(i) + a1.get(i)) / k));
        }
    }

    /**
     * Average of 3 inputs: the float64 sum {@code a0[i] + ... + a2[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average3(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) (((double) a0.get(i) + a1.get(i) + a2.get(i)) / k));
        }
    }

    /**
     * Average of 4 inputs: the float64 sum {@code a0[i] + ... + a3[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average4(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) (((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i)) / k));
        }
    }

    /**
     * Average of 5 inputs: the float64 sum {@code a0[i] + ... + a4[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average5(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) (((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i)) / k));
        }
    }

    /**
     * Average of 6 inputs: the float64 sum {@code a0[i] + ... + a5[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average6(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) (((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i)) / k));
        }
    }

    /**
     * Average of 7 inputs: the float64 sum {@code a0[i] + ... + a6[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average7(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, FloatArray a6, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) (((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i) + a6.get(i)) / k));
        }
    }

    /**
     * Average of 8 inputs: the float64 sum {@code a0[i] + ... + a7[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type.
     */
    public static void average8(FloatArray out, FloatArray a0, FloatArray a1, FloatArray a2, FloatArray a3, FloatArray a4, FloatArray a5, FloatArray a6, FloatArray a7, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) (((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i) + a6.get(i) + a7.get(i)) / k));
        }
    }

    /**
     * Average of 2 inputs: the float64 sum {@code a0[i] + ... + a1[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average2Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i)) / k));
        }
    }

    /**
     * Average of 3 inputs: the float64 sum {@code a0[i] + ... + a2[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average3Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i)) / k));
        }
    }

    /**
     * Average of 4 inputs: the float64 sum {@code a0[i] + ... + a3[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average4Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i)) / k));
        }
    }

    /**
     * Average of 5 inputs: the float64 sum {@code a0[i] + ... + a4[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average5Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i)) / k));
        }
    }

    /**
     * Average of 6 inputs: the float64 sum {@code a0[i] + ... + a5[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average6Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i)) / k));
        }
    }

    /**
     * Average of 7 inputs: the float64 sum {@code a0[i] + ... + a6[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average7Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, Bfloat16Array a6, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i) + a6.get(i)) / k));
        }
    }

    /**
     * Average of 8 inputs: the float64 sum {@code a0[i] + ... + a7[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average8Bf16(Bfloat16Array out, Bfloat16Array a0, Bfloat16Array a1, Bfloat16Array a2, Bfloat16Array a3, Bfloat16Array a4, Bfloat16Array a5, Bfloat16Array a6, Bfloat16Array a7, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i) + a6.get(i) + a7.get(i)) / k));
        }
    }

    /**
     * Average of 2 inputs: the float64 sum {@code a0[i] + ... + a1[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average2F16(HalfArray out, HalfArray a0, HalfArray a1, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i)) / k));
        }
    }

    /**
     * Average of 3 inputs: the float64 sum {@code a0[i] + ... + a2[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average3F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i)) / k));
        }
    }

    /**
     * Average of 4 inputs: the float64 sum {@code a0[i] + ... + a3[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average4F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i)) / k));
        }
    }

    /**
     * Average of 5 inputs: the float64 sum {@code a0[i] + ... + a4[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average5F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i)) / k));
        }
    }

    /**
     * Average of 6 inputs: the float64 sum {@code a0[i] + ... + a5[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average6F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i)) / k));
        }
    }

    /**
     * Average of 7 inputs: the float64 sum {@code a0[i] + ... + a6[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average7F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, HalfArray a6, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i) + a6.get(i)) / k));
        }
    }

    /**
     * Average of 8 inputs: the float64 sum {@code a0[i] + ... + a7[i]} in replica order, divided
     * by {@code k} (the replica count), rounded once to the element type (through round-to-odd: one rounding).
     */
    public static void average8F16(HalfArray out, HalfArray a0, HalfArray a1, HalfArray a2, HalfArray a3, HalfArray a4, HalfArray a5, HalfArray a6, HalfArray a7, float k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, HalfFloats.roundToOdd(((double) a0.get(i) + a1.get(i) + a2.get(i) + a3.get(i) + a4.get(i) + a5.get(i) + a6.get(i) + a7.get(i)) / k));
        }
    }
}
