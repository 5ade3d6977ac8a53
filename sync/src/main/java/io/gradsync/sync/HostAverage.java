package io.gradsync.sync;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.kernels.GradientKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The host side of an average: {@code out[i] = (in[0][i] + in[1][i] + ... + in[n-1][i]) * scale},
 * summed in replica order in fp32, so that every backend rounds the same way. Half types are
 * widened to fp32, summed, scaled and rounded back to nearest-even once.
 *
 * <p>Plain counted loops over aligned segments: C2 turns the fp32 ones into vector code. Public
 * for the bucket norm on JVM devices, which sums and scales bucket memory the same way.
 */
public final class HostAverage {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT;
    /** General-n path works in blocks small enough for L1. */
    private static final int BLOCK = 1024;

    private HostAverage() {
    }

    /**
     * Averages elements {@code [from, to)}; inputs and output are views starting at element 0 (with
     * one input, it scales; the output may be that input).
     */
    public static void average(DType dtype, MemorySegment[] in, MemorySegment out, long from, long to, float scale) {
        switch (dtype) {
            case FP32 -> fp32(in, out, from, to, scale);
            case BF16 -> bf16(in, out, from, to, scale);
            case FP16 -> fp16(in, out, from, to, scale);
        }
    }

    private static void fp32(MemorySegment[] in, MemorySegment out, long from, long to, float scale) {
        switch (in.length) {
            case 1 -> {
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, in[0].getAtIndex(F32, i) * scale);
                }
            }
            case 2 -> {
                MemorySegment a = in[0], b = in[1];
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, (a.getAtIndex(F32, i) + b.getAtIndex(F32, i)) * scale);
                }
            }
            case 3 -> {
                MemorySegment a = in[0], b = in[1], c = in[2];
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, (a.getAtIndex(F32, i) + b.getAtIndex(F32, i) + c.getAtIndex(F32, i)) * scale);
                }
            }
            case 4 -> {
                MemorySegment a = in[0], b = in[1], c = in[2], d = in[3];
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, (a.getAtIndex(F32, i) + b.getAtIndex(F32, i) + c.getAtIndex(F32, i)
                            + d.getAtIndex(F32, i)) * scale);
                }
            }
            default -> fp32Blocked(in, out, from, to, scale);
        }
    }

    private static void fp32Blocked(MemorySegment[] in, MemorySegment out, long from, long to, float scale) {
        float[] acc = new float[blockFor(from, to)];
        for (long start = from; start < to; start += BLOCK) {
            int n = (int) Math.min(BLOCK, to - start);
            MemorySegment first = in[0];
            for (int j = 0; j < n; j++) {
                acc[j] = first.getAtIndex(F32, start + j);
            }
            for (int r = 1; r < in.length; r++) {
                MemorySegment src = in[r];
                for (int j = 0; j < n; j++) {
                    acc[j] += src.getAtIndex(F32, start + j);
                }
            }
            for (int j = 0; j < n; j++) {
                out.setAtIndex(F32, start + j, acc[j] * scale);
            }
        }
    }

    // The half types widen block by block into fp32 sums and narrow once per block. Each loop is a
    // method of its own over one array and one conversion: C2 vectorizes them so, not when they
    // share a method. The per-element form (the replicas in an inner loop, the type chosen per
    // value) ran at 1.4 (bf16) and 1.7 (fp16) GB/s on one thread where fp32 ran at 22; these at 5 and 9-13.

    /** Scratch for a call: a block, or less where the call is smaller (small gradients are many). */
    private static int blockFor(long from, long to) {
        return (int) Math.max(1, Math.min(BLOCK, to - from));
    }

    private static void bf16(MemorySegment[] in, MemorySegment out, long from, long to, float scale) {
        float[] acc = new float[blockFor(from, to)];
        int[] bits = new int[acc.length];
        // float-to-int bit moves do not vectorize beside integer arithmetic: the scaled sums reach the
        // rounding as ints by being stored through this float view of the int array
        MemorySegment bitsAsFloats = MemorySegment.ofArray(bits);
        for (long start = from; start < to; start += BLOCK) {
            int n = (int) Math.min(BLOCK, to - start);
            widenBf16(in[0], start, acc, n);
            for (int r = 1; r < in.length; r++) {
                addBf16(in[r], start, acc, n);
            }
            scaleInto(acc, scale, bitsAsFloats, n);
            roundToBf16InHighHalf(bits, n);
            storeHighHalves(bits, out, start, n);
        }
    }

    private static void widenBf16(MemorySegment src, long at, float[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] = HalfFloats.bf16ToFloat(src.getAtIndex(I16, at + j));
        }
    }

    private static void addBf16(MemorySegment src, long at, float[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] += HalfFloats.bf16ToFloat(src.getAtIndex(I16, at + j));
        }
    }

    private static void scaleInto(float[] acc, float scale, MemorySegment floats, int n) {
        for (int j = 0; j < n; j++) {
            floats.setAtIndex(F32, j, acc[j] * scale);
        }
    }

    private static void roundToBf16InHighHalf(int[] bits, int n) {
        for (int j = 0; j < n; j++) {
            bits[j] = HalfFloats.bf16InHighHalf(bits[j]);
        }
    }

    private static void storeHighHalves(int[] bits, MemorySegment out, long at, int n) {
        for (int j = 0; j < n; j++) {
            out.setAtIndex(I16, at + j, (short) (bits[j] >>> 16));
        }
    }

    private static void fp16(MemorySegment[] in, MemorySegment out, long from, long to, float scale) {
        float[] acc = new float[blockFor(from, to)];
        for (long start = from; start < to; start += BLOCK) {
            int n = (int) Math.min(BLOCK, to - start);
            widenF16(in[0], start, acc, n);
            for (int r = 1; r < in.length; r++) {
                addF16(in[r], start, acc, n);
            }
            narrowF16(acc, scale, out, start, n);
        }
    }

    private static void widenF16(MemorySegment src, long at, float[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] = HalfFloats.halfToFloat(src.getAtIndex(I16, at + j));
        }
    }

    private static void addF16(MemorySegment src, long at, float[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] += HalfFloats.halfToFloat(src.getAtIndex(I16, at + j));
        }
    }

    private static void narrowF16(float[] acc, float scale, MemorySegment out, long at, int n) {
        for (int j = 0; j < n; j++) {
            out.setAtIndex(I16, at + j, HalfFloats.floatToHalf(acc[j] * scale));
        }
    }

    /**
     * The float64 sum of squares of {@code count} values, added exactly as the GPUs add them: it
     * is the partials kernel's own Java ({@link GradientKernels#sumOfSquaresPartials}) run as one
     * thread with one slot (eight running sums, added pairwise), not a copy of its order.
     */
    public static double sumOfSquares(DType dtype, MemorySegment values, long count) {
        MemorySegment used = values.asSlice(0, count * dtype.bytes());
        KernelContext oneThread = new KernelContext(1, 1);
        DoubleArray sum = DoubleArray.wrap(MemorySegment.ofArray(new double[1]));
        switch (dtype) {
            case FP32 -> GradientKernels.sumOfSquaresPartials(oneThread, FloatArray.wrap(used), sum);
            case BF16 -> GradientKernels.sumOfSquaresPartialsBf16(oneThread, Bfloat16Array.wrap(used), sum);
            case FP16 -> GradientKernels.sumOfSquaresPartialsF16(oneThread, HalfArray.wrap(used), sum);
        }
        return sum.get(0);
    }
}
