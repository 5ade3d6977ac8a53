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
    static double sumOfSquares(DType dtype, MemorySegment values, long count) {
        double sum = 0;
        switch (dtype) {
            case FP32 -> {
                for (long i = 0; i < count; i++) {
                    double v = values.getAtIndex(F32, i);
                    sum += v * v;
                }
            }
            case BF16, FP16 -> {
                boolean bf16 = dtype == DType.BF16;
                for (long i = 0; i < count; i++) {
                    double v = toFloat(bf16, values.getAtIndex(I16, i));
                    sum += v * v;
                }
            }
        }
        return sum;
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
