package io.gradsync.sync.internal;

import io.gradsync.sync.DType;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.JvmFastForm;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.kernels.ReductionKernels;
import io.gradsync.tasks.kernels.internal.CoreSpread;
import io.gradsync.tasks.kernels.internal.Lanes;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The host side of an average: {@code out[i] = (in[0][i] + in[1][i] + ... + in[n-1][i]) / n}, the
 * sum in float64 in replica order, divided by {@code n} in float64 and rounded once to the element
 * type (16-bit types through {@link HalfFloats#roundToOdd}), exactly as the device kernels
 * ({@link io.gradsync.tasks.kernels.AverageKernels}) do: the same bits on every backend.
 *
 * <p>From 2 to 8 inputs, pieces of 512 elements or more run the fused average kernel's JVM form;
 * the rest plain counted loops over aligned segments and arrays, one conversion per loop, so that C2
 * vectorizes them. Public for the bucket norm on JVM devices, which scales bucket memory as the
 * scale kernels do ({@link #scale}).
 *
 * <p>Thread-safety: stateless static methods (each call has its own scratch), callable from any thread
 * at once; calls writing the same elements race as plain stores do, and the segments must be
 * accessible from the calling thread (shared or global arenas).
 */
public final class HostAverage {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT;
    /** Work in blocks small enough for L1. */
    private static final int BLOCK = 1024;
    /** The fewest elements the kernels' forms take (one of their chunks): fewer are as quick here. */
    public static final int FORM_MIN = 512;
    private static final JvmFastForm[][] FORMS = forms();

    private HostAverage() {
    }

    /**
     * Averages elements {@code [from, to)} of the {@code in.length} inputs into {@code out}; inputs
     * and output are views starting at element 0 (the output may be one of the inputs).
     */
    public static void average(DType dtype, MemorySegment[] in, MemorySegment out, long from, long to) {
        if (byKernelForm(dtype, in, out, from, to)) {
            return;
        }
        if (dtype == DType.FP32 && in.length <= 4) {
            fp32Unrolled(in, out, from, to);
            return;
        }
        double[] acc = new double[blockFor(from, to)];
        int[] bits = dtype == DType.FP32 ? null : new int[acc.length];
        double k = in.length;
        for (long start = from; start < to; start += BLOCK) {
            int n = (int) Math.min(BLOCK, to - start);
            switch (dtype) {
                case FP32 -> {
                    widenFp32(in[0], start, acc, n);
                    for (int r = 1; r < in.length; r++) {
                        addFp32(in[r], start, acc, n);
                    }
                    divideIntoFp32(acc, k, out, start, n);
                }
                case BF16 -> {
                    widenBf16(in[0], start, acc, n);
                    for (int r = 1; r < in.length; r++) {
                        addBf16(in[r], start, acc, n);
                    }
                    divideToOdd(acc, k, bits, n);
                    for (int j = 0; j < n; j++) {
                        bits[j] = HalfFloats.bf16InHighHalf(bits[j]);
                    }
                    for (int j = 0; j < n; j++) {
                        out.setAtIndex(I16, start + j, (short) (bits[j] >>> 16));
                    }
                }
                case FP16 -> {
                    widenF16(in[0], start, acc, n);
                    for (int r = 1; r < in.length; r++) {
                        addF16(in[r], start, acc, n);
                    }
                    divideToOdd(acc, k, bits, n);
                    for (int j = 0; j < n; j++) {
                        out.setAtIndex(I16, start + j, HalfFloats.floatToHalf(Float.intBitsToFloat(bits[j])));
                    }
                }
            }
        }
    }

    /**
     * Averages elements {@code [from, to)} of the inputs into every input (the all-reduce's result
     * on host memory), with {@link #average}'s bits: in SIMD lanes where {@link Lanes#available()}
     * (fp32 pieces shorter than the kernels' forms take into every input at once, bf16 ones of 2 to
     * 8 replicas into the first), else into {@code in[0]}; then copied from there to the others.
     */
    public static void averageIntoAll(DType dtype, MemorySegment[] in, long from, long to) {
        long done = from;
        // pieces the forms do not take (a model's many small tensors); longer ones run the form (one
        // output) and a copy: lanes writing both replicas of a long piece kept failing C2's
        // speculation until they ran unoptimized, at a quarter of the form's speed (RESULTS)
        boolean lanes = Lanes.available() && in.length >= 2 && to - from < FORM_MIN;
        if (lanes && dtype == DType.FP32) {
            long steps = (to - from) / Lanes.width();
            Lanes.averageF32(in, in, from, steps, in.length);
            done = from + steps * Lanes.width();
        } else if (lanes && dtype == DType.BF16 && in.length <= 8) {
            bf16IntoFirst(in, from, to);
            copyFromFirst(dtype, in, from, to);
            return;
        }
        if (done < to) {
            average(dtype, in, in[0], done, to);
            copyFromFirst(dtype, in, done, to);
        }
    }

    /**
     * bf16 elements {@code [from, to)} of 2 to 8 replicas averaged into the first, by the kernels'
     * 16-bit lanes (one implementation of their bits for the forms and the host).
     */
    private static void bf16IntoFirst(MemorySegment[] in, long from, long to) {
        int n = (int) (to - from);
        MemorySegment[] views = new MemorySegment[in.length];
        for (int r = 0; r < in.length; r++) {
            views[r] = in[r].asSlice(2 * from, 2L * n);
        }
        if (in.length == 2) {
            Lanes.averageTwoBf16(views[0], views[0], views[1], n);
        } else {
            Lanes.averageBf16(views[0], views, n);
        }
    }

    private static void copyFromFirst(DType dtype, MemorySegment[] in, long from, long to) {
        long size = dtype.bytes();
        for (int r = 1; r < in.length; r++) {
            MemorySegment.copy(in[0], from * size, in[r], from * size, (to - from) * size);
        }
    }

    /**
     * The fused average kernel's JVM form ({@link KernelSpec#jvmFastForm()}), for 2 to 8 inputs and
     * at least {@link #FORM_MIN} elements: the same bits, in passes C2 vectorizes, on this thread
     * (the callers share their pieces among the cores themselves). False where it does not apply.
     */
    private static boolean byKernelForm(DType dtype, MemorySegment[] in, MemorySegment out, long from, long to) {
        long n = to - from;
        if (in.length < 2 || in.length >= FORMS[0].length || n < FORM_MIN || n > Integer.MAX_VALUE) {
            return false;
        }
        long bytes = dtype.bytes();
        Object[] args = new Object[in.length + 2];
        args[0] = wrap(dtype, out.asSlice(from * bytes, n * bytes));
        for (int r = 0; r < in.length; r++) {
            args[r + 1] = wrap(dtype, in[r].asSlice(from * bytes, n * bytes));
        }
        args[in.length + 1] = (float) in.length;
        JvmFastForm form = FORMS[dtype.ordinal()][in.length];
        boolean[] ran = new boolean[1];
        CoreSpread.onCallersThread(() -> ran[0] = form.run(args));
        return ran[0];
    }

    private static KernelArray wrap(DType dtype, MemorySegment s) {
        return switch (dtype) {
            case FP32 -> FloatArray.wrap(s);
            case BF16 -> Bfloat16Array.wrap(s);
            case FP16 -> HalfArray.wrap(s);
        };
    }

    /** The fused averages' JVM forms by element type and input count (2..8). */
    private static JvmFastForm[][] forms() {
        JvmFastForm[][] forms = new JvmFastForm[DType.values().length][9];
        for (int k = 2; k <= 8; k++) {
            forms[DType.FP32.ordinal()][k] = BuiltinKernels.average(k).jvmFastForm().orElseThrow();
            forms[DType.BF16.ordinal()][k] = BuiltinKernels.averageBf16(k).jvmFastForm().orElseThrow();
            forms[DType.FP16.ordinal()][k] = BuiltinKernels.averageF16(k).jvmFastForm().orElseThrow();
        }
        return forms;
    }

    /** {@code values[i] *= s} for {@code [from, to)}, in fp32 and rounded once, as the scale kernels do. */
    public static void scale(DType dtype, MemorySegment values, long from, long to, float s) {
        for (long i = from; i < to; i++) {
            switch (dtype) {
                case FP32 -> values.setAtIndex(F32, i, values.getAtIndex(F32, i) * s);
                case BF16 -> values.setAtIndex(I16, i, HalfFloats.floatToBf16(HalfFloats.bf16ToFloat(values.getAtIndex(I16, i)) * s));
                case FP16 -> values.setAtIndex(I16, i, HalfFloats.floatToHalf(HalfFloats.halfToFloat(values.getAtIndex(I16, i)) * s));
            }
        }
    }

    /**
     * 2 to 4 fp32 inputs in one pass. Where n is a power of two its reciprocal is exact, and
     * multiplying by it gives the quotient's very bits (a power-of-two scaling rounds as the
     * division does), at a multiply's cost.
     */
    private static void fp32Unrolled(MemorySegment[] in, MemorySegment out, long from, long to) {
        switch (in.length) {
            case 1 -> {
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, in[0].getAtIndex(F32, i));
                }
            }
            case 2 -> {
                MemorySegment a = in[0], b = in[1];
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, (float) (((double) a.getAtIndex(F32, i) + b.getAtIndex(F32, i)) * 0.5));
                }
            }
            case 3 -> {
                MemorySegment a = in[0], b = in[1], c = in[2];
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, (float) (((double) a.getAtIndex(F32, i) + b.getAtIndex(F32, i) + c.getAtIndex(F32, i)) / 3));
                }
            }
            default -> {
                MemorySegment a = in[0], b = in[1], c = in[2], d = in[3];
                for (long i = from; i < to; i++) {
                    out.setAtIndex(F32, i, (float) (((double) a.getAtIndex(F32, i) + b.getAtIndex(F32, i) + c.getAtIndex(F32, i)
                            + d.getAtIndex(F32, i)) * 0.25));
                }
            }
        }
    }

    // One loop per conversion, each a method of its own: C2 vectorizes them so, not when they share one.

    /** Scratch for a call: a block, or less where the call is smaller (small gradients are many). */
    private static int blockFor(long from, long to) {
        return (int) Math.max(1, Math.min(BLOCK, to - from));
    }

    private static void widenFp32(MemorySegment src, long at, double[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] = src.getAtIndex(F32, at + j);
        }
    }

    private static void addFp32(MemorySegment src, long at, double[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] += src.getAtIndex(F32, at + j);
        }
    }

    private static void divideIntoFp32(double[] acc, double k, MemorySegment out, long at, int n) {
        if (k == 8) { // an exact reciprocal: the same bits at a multiply's cost
            for (int j = 0; j < n; j++) {
                out.setAtIndex(F32, at + j, (float) (acc[j] * 0.125));
            }
            return;
        }
        for (int j = 0; j < n; j++) {
            out.setAtIndex(F32, at + j, (float) (acc[j] / k));
        }
    }

    private static void widenBf16(MemorySegment src, long at, double[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] = HalfFloats.bf16ToFloat(src.getAtIndex(I16, at + j));
        }
    }

    private static void addBf16(MemorySegment src, long at, double[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] += HalfFloats.bf16ToFloat(src.getAtIndex(I16, at + j));
        }
    }

    private static void widenF16(MemorySegment src, long at, double[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] = HalfFloats.halfToFloat(src.getAtIndex(I16, at + j));
        }
    }

    private static void addF16(MemorySegment src, long at, double[] acc, int n) {
        for (int j = 0; j < n; j++) {
            acc[j] += HalfFloats.halfToFloat(src.getAtIndex(I16, at + j));
        }
    }

    /** The float bits of each mean rounded to odd: one more rounding to nearest-even (bf16, fp16) is then the only one. */
    private static void divideToOdd(double[] acc, double k, int[] bits, int n) {
        double reciprocal = 1 / k;
        if (reciprocal * k == 1 && Math.getExponent(reciprocal) == Math.getExponent(reciprocal * 1.5)) { // a power of two
            for (int j = 0; j < n; j++) {
                bits[j] = Float.floatToRawIntBits(HalfFloats.roundToOdd(acc[j] * reciprocal));
            }
            return;
        }
        for (int j = 0; j < n; j++) {
            bits[j] = Float.floatToRawIntBits(HalfFloats.roundToOdd(acc[j] / k));
        }
    }

    /**
     * The float64 sum of squares of {@code count} values, for the host's own norm passes: in the
     * SIMD lanes where the vector module is (the JVM forms of {@code sumOfSquares*}: a fixed order
     * for a given length, not the kernels'), else as {@link #sumOfSquares}. NaN if any value is,
     * else infinity if any is infinite.
     */
    public static double sumOfSquaresFast(DType dtype, MemorySegment values, long count) {
        if (!Lanes.available()) {
            return sumOfSquares(dtype, values, count);
        }
        return switch (dtype) {
            case FP32 -> Lanes.sumOfSquaresF32(values, 0, count);
            case BF16 -> Lanes.sumOfSquaresBf16(values, 0, count);
            case FP16 -> Lanes.sumOfSquaresF16(values, 0, count);
        };
    }

    /**
     * The float64 sum of squares of {@code count} values, added exactly as the GPUs add them: it
     * is the partials kernel's own Java ({@link ReductionKernels#sumOfSquaresPartials}) run as one
     * thread with one slot (eight running sums, added pairwise), not a copy of its order.
     */
    public static double sumOfSquares(DType dtype, MemorySegment values, long count) {
        MemorySegment used = values.asSlice(0, count * dtype.bytes());
        KernelContext oneThread = new KernelContext(1, 1);
        DoubleArray sum = DoubleArray.wrap(MemorySegment.ofArray(new double[1]));
        switch (dtype) {
            case FP32 -> ReductionKernels.sumOfSquaresPartials(oneThread, FloatArray.wrap(used), sum);
            case BF16 -> ReductionKernels.sumOfSquaresPartialsBf16(oneThread, Bfloat16Array.wrap(used), sum);
            case FP16 -> ReductionKernels.sumOfSquaresPartialsF16(oneThread, HalfArray.wrap(used), sum);
        }
        return sum.get(0);
    }
}
