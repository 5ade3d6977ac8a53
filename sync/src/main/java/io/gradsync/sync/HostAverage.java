package io.gradsync.sync;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The host side of an average: {@code out[i] = (in[0][i] + in[1][i] + ... + in[n-1][i]) * scale},
 * summed in replica order in fp32, so that every backend rounds the same way. Half types are
 * widened to fp32, summed, scaled and rounded back to nearest-even once.
 *
 * <p>Plain counted loops over aligned segments: C2 turns the fp32 ones into vector code.
 */
final class HostAverage {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT;
    /** General-n path works in blocks small enough for L1. */
    private static final int BLOCK = 1024;

    private HostAverage() {
    }

    /** Averages elements {@code [from, to)}; inputs and output are views starting at element 0. */
    static void average(DType dtype, MemorySegment[] in, MemorySegment out, long from, long to, float scale) {
        switch (dtype) {
            case FP32 -> fp32(in, out, from, to, scale);
            case BF16, FP16 -> half(dtype, in, out, from, to, scale);
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
        float[] acc = new float[BLOCK];
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

    private static void half(DType dtype, MemorySegment[] in, MemorySegment out, long from, long to, float scale) {
        boolean bf16 = dtype == DType.BF16;
        for (long i = from; i < to; i++) {
            float sum = toFloat(bf16, in[0].getAtIndex(I16, i));
            for (int r = 1; r < in.length; r++) {
                sum += toFloat(bf16, in[r].getAtIndex(I16, i));
            }
            out.setAtIndex(I16, i, fromFloat(bf16, sum * scale));
        }
    }

    /** Float64 sum of the squares of {@code count} values of {@code dtype} in {@code values}, in index order. */
    /**
     * The float64 sum of squares of {@code count} values, as the GPU kernels add them
     * ({@code GradientKernels.squares}): element {@code j} into running sum {@code j mod 8} while
     * whole groups of eight remain, the rest into sum 0, the eight sums added pairwise. Eight
     * independent sums, not one chain of dependent adds: several times faster, and it runs in the
     * averaging pass of every chunk.
     */
    static double sumOfSquares(DType dtype, MemorySegment values, long count) {
        boolean bf16 = dtype == DType.BF16;
        boolean wide = dtype == DType.FP32;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        long i = 0;
        for (; i + 8 <= count; i += 8) {
            double v0 = value(wide, bf16, values, i);
            double v1 = value(wide, bf16, values, i + 1);
            double v2 = value(wide, bf16, values, i + 2);
            double v3 = value(wide, bf16, values, i + 3);
            double v4 = value(wide, bf16, values, i + 4);
            double v5 = value(wide, bf16, values, i + 5);
            double v6 = value(wide, bf16, values, i + 6);
            double v7 = value(wide, bf16, values, i + 7);
            s0 += v0 * v0;
            s1 += v1 * v1;
            s2 += v2 * v2;
            s3 += v3 * v3;
            s4 += v4 * v4;
            s5 += v5 * v5;
            s6 += v6 * v6;
            s7 += v7 * v7;
        }
        for (; i < count; i++) {
            double v = value(wide, bf16, values, i);
            s0 += v * v;
        }
        return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    }

    private static double value(boolean fp32, boolean bf16, MemorySegment values, long i) {
        return fp32 ? values.getAtIndex(F32, i) : toFloat(bf16, values.getAtIndex(I16, i));
    }

    static float toFloat(boolean bf16, short bits) {
        return bf16 ? Float.intBitsToFloat((bits & 0xFFFF) << 16) : Float.float16ToFloat(bits);
    }

    static short fromFloat(boolean bf16, float value) {
        return bf16 ? floatToBf16(value) : Float.floatToFloat16(value);
    }

    /** Round to nearest even; NaN stays NaN (quiet). */
    static short floatToBf16(float value) {
        int bits = Float.floatToRawIntBits(value);
        if ((bits & 0x7FFFFFFF) > 0x7F800000) {
            return (short) ((bits >>> 16) | 0x40);
        }
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }
}
