package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.Parallel;

/**
 * The conversions between fp32 and the 16-bit float types, written as plain Java (the JVM
 * implementation, the reference and the compiler's source, as {@link ElementwiseKernels}). Each is
 * a {@code @Parallel} loop over the output's elements: widening is exact, narrowing rounds to
 * nearest even. JVM fast forms: {@link ConversionJvmForm}; CUDA C reference: {@code conversions.cu}
 * beside this class ({@link KernelFamily#CONVERSIONS}).
 */
public final class ConversionKernels {
    private ConversionKernels() {
    }

    /** Widens bf16 to fp32 (exact). */
    public static void bf16ToF32(Bfloat16Array in, FloatArray out) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }

    /** Rounds fp32 to bf16 (nearest even). */
    public static void f32ToBf16(FloatArray in, Bfloat16Array out) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }

    /** Widens fp16 to fp32 (exact). */
    public static void f16ToF32(HalfArray in, FloatArray out) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }

    /** Rounds fp32 to fp16 (nearest even). */
    public static void f32ToF16(FloatArray in, HalfArray out) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }
}
