package io.gradsync.sync.verify;

import io.gradsync.sync.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Compares an averaged gradient with the float64 average of the replicas' inputs, element by
 * element, allowing for fp32 summation and for the output's own rounding. This is what the
 * benchmark's {@code #wrong} column counts and what the tests assert.
 */
public final class AverageCheck {
    private static final double FP32_UNIT = 0x1p-24;

    private AverageCheck() {
    }

    /** Relative rounding unit of one stored value. */
    static double unit(DType dtype) {
        return switch (dtype) {
            case FP32 -> FP32_UNIT;
            case BF16 -> 0x1p-8;
            case FP16 -> 0x1p-11;
        };
    }

    /** Smallest step the type resolves near zero (its subnormal or normal floor). */
    static double floor(DType dtype) {
        return switch (dtype) {
            case FP32 -> Float.MIN_NORMAL;
            case BF16 -> Float.MIN_NORMAL;
            case FP16 -> 0x1p-24;
        };
    }

    /** Element {@code i} of a segment of {@code dtype} values, widened. */
    public static double get(DType dtype, MemorySegment segment, long i) {
        return switch (dtype) {
            case FP32 -> segment.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            case BF16 -> Float.intBitsToFloat((segment.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i) & 0xFFFF) << 16);
            case FP16 -> Float.float16ToFloat(segment.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
        };
    }

    /**
     * Counts elements of {@code output} that are not the average of {@code inputs} (each
     * {@code count} elements of {@code dtype}) within rounding. NaN never passes.
     */
    public static long countWrong(DType dtype, MemorySegment[] inputs, MemorySegment output, long count) {
        return countWrong(dtype, dtype, inputs, output, count);
    }

    /**
     * As {@link #countWrong(DType, MemorySegment[], MemorySegment, long)} for fp32 gradients sent
     * on a 16-bit {@code wire} ({@code SyncOptions.withWire}): each input and the average were
     * also rounded to the wire type, so each rounding may cost the wire's unit.
     */
    public static long countWrong(DType dtype, DType wire, MemorySegment[] inputs, MemorySegment output, long count) {
        int n = inputs.length;
        double unit = Math.max(unit(dtype), unit(wire));
        double floor = Math.max(floor(dtype), floor(wire));
        double inputUnit = wire == dtype ? 0 : unit(wire);
        long wrong = 0;
        for (long i = 0; i < count; i++) {
            double sum = 0;
            double abs = 0;
            for (MemorySegment in : inputs) {
                double v = get(dtype, in, i);
                sum += v;
                abs += Math.abs(v);
            }
            double ref = sum / n;
            double got = get(dtype, output, i);
            // fp32 summation of n terms, the scale, then one rounding to the stored type.
            double tol = (FP32_UNIT * (n + 1) + inputUnit) * abs / n + unit * Math.abs(ref) + floor;
            if (!(Math.abs(got - ref) <= tol)) {
                wrong++;
            }
        }
        return wrong;
    }
}
