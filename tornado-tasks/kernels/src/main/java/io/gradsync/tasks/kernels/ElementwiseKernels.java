package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.Parallel;

/**
 * The element-wise built-in kernels: {@code sumInto}, {@code scale} and {@code copy} for fp32, bf16
 * and fp16, written as plain Java. This code is the JVM implementation, the reference the device
 * forms are tested against, and the source the compiler translates to PTX and OpenCL C; the JVM
 * fast forms of the 16-bit ones are {@link ElementwiseJvmForm}, the CUDA C reference
 * {@code elementwise.cu} beside this class ({@link KernelFamily#ELEMENTWISE}).
 *
 * <p>Each kernel is a {@code @Parallel} loop over the first array's elements, so it is correct for
 * any launch size (a grid-stride loop on a device). Callers pass arrays of equal length. Sums and
 * products run in fp32; 16-bit values are widened to fp32 and rounded once to nearest even on store.
 */
public final class ElementwiseKernels {
    private ElementwiseKernels() {
    }

    /** {@code acc[i] += x[i]}. */
    public static void sumInto(FloatArray acc, FloatArray x) {
        for (@Parallel int i = 0; i < acc.getSize(); i++) {
            acc.set(i, acc.get(i) + x.get(i));
        }
    }

    /** {@code x[i] *= s}. */
    public static void scale(FloatArray x, float s) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, x.get(i) * s);
        }
    }

    /** {@code acc[i] += x[i]}. */
    public static void sumIntoBf16(Bfloat16Array acc, Bfloat16Array x) {
        for (@Parallel int i = 0; i < acc.getSize(); i++) {
            acc.set(i, acc.get(i) + x.get(i));
        }
    }

    /** {@code x[i] *= s}. */
    public static void scaleBf16(Bfloat16Array x, float s) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, x.get(i) * s);
        }
    }

    /** {@code acc[i] += x[i]}. */
    public static void sumIntoF16(HalfArray acc, HalfArray x) {
        for (@Parallel int i = 0; i < acc.getSize(); i++) {
            acc.set(i, acc.get(i) + x.get(i));
        }
    }

    /** {@code x[i] *= s}. */
    public static void scaleF16(HalfArray x, float s) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, x.get(i) * s);
        }
    }

    /** {@code out[i] = in[i]}: a copy through the SMs, e.g. reading a peer GPU's memory (an all-gather). */
    public static void copy(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }

    /** {@code out[i] = in[i]} (exact for every value but NaN payloads). */
    public static void copyBf16(Bfloat16Array out, Bfloat16Array in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }

    /** {@code out[i] = in[i]} (exact for every value but NaN payloads). */
    public static void copyF16(HalfArray out, HalfArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }
}
