package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Atomics;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.SixteenBitFloatArray;

/**
 * The built-in reductions, written as plain Java (the JVM implementation, the reference and the
 * compiler's source, as {@link ElementwiseKernels}): the finite check, sums of squares (atomic, and
 * deterministic fp64 partials) and the second stage that adds partials down. KernelContext kernels
 * with a grid-stride share per thread, correct for any launch size; the built-in launch bounds the
 * threads ({@link BuiltinKernels#REDUCTION_THREADS}). JVM fast forms: {@link ReductionJvmForm}; CUDA C
 * reference: {@code reductions.cu} beside this class ({@link KernelFamily#REDUCTIONS}).
 */
public final class ReductionKernels {
    private ReductionKernels() {
    }

    /**
     * Adds fp64 partial sums down to fewer slots, deterministic (no atomics): slot {@code p} of
     * {@code partials} gets {@code x[p] + x[p + P] + x[p + 2P] + ...} in that order ({@code P} =
     * number of slots). The second stage of a sum of squares whose first stage
     * ({@code sumOfSquaresPartials*}) used more slots, to keep a GPU busy, than the host should add.
     */
    public static void sumPartials(KernelContext ctx, DoubleArray x, DoubleArray partials) {
        int n = x.getSize();
        int slots = partials.getSize();
        for (int p = ctx.globalIdx(); p < slots; p += ctx.globalSize()) {
            int count = p < n ? (n - p - 1) / slots + 1 : 0; // the index never runs past n
            double acc = 0.0;
            int i = p;
            // eight loads in flight, then added in order: the same sum as one at a time, not latency-bound
            for (int groups = count / 8; groups > 0; groups--) {
                double v0 = x.get(i);
                double v1 = x.get(i + slots);
                double v2 = x.get(i + 2 * slots);
                double v3 = x.get(i + 3 * slots);
                double v4 = x.get(i + 4 * slots);
                double v5 = x.get(i + 5 * slots);
                double v6 = x.get(i + 6 * slots);
                double v7 = x.get(i + 7 * slots);
                i += 8 * slots;
                acc = acc + v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;
            }
            for (int rest = count % 8; rest > 0; rest--) {
                acc += x.get(i);
                i += slots;
            }
            partials.set(p, acc);
        }
    }

    /**
     * Sets {@code flag[0] = 1} if any element is NaN or infinite; never clears it (zero it first).
     * Each thread takes the largest magnitude of its grid-stride share (a NaN wins {@code Math.max}),
     * eight loads in flight, and only a thread that saw a non-finite value stores: a flag needs no
     * combining, so there is nothing for the group to wait for. Correct for any launch size.
     */
    public static void checkFinite(KernelContext ctx, FloatArray x, IntArray flag) {
        if (!(largestMagnitude(x, ctx.globalIdx(), ctx.globalSize()) <= Float.MAX_VALUE)) {
            flag.set(0, 1);
        }
    }

    /** The largest {@code |x[i]|} over {@code i = first, first + stride, ...}; NaN if any is NaN. */
    private static float largestMagnitude(FloatArray x, int first, int stride) {
        int n = x.getSize();
        int count = first < n ? (n - first - 1) / stride + 1 : 0;
        float m = 0f;
        int i = first;
        for (int groups = count / 8; groups > 0; groups--) {
            float v0 = Math.abs(x.get(i));
            float v1 = Math.abs(x.get(i + stride));
            float v2 = Math.abs(x.get(i + 2 * stride));
            float v3 = Math.abs(x.get(i + 3 * stride));
            float v4 = Math.abs(x.get(i + 4 * stride));
            float v5 = Math.abs(x.get(i + 5 * stride));
            float v6 = Math.abs(x.get(i + 6 * stride));
            float v7 = Math.abs(x.get(i + 7 * stride));
            i += 8 * stride;
            m = Math.max(m, Math.max(Math.max(Math.max(v0, v1), Math.max(v2, v3)), Math.max(Math.max(v4, v5), Math.max(v6, v7))));
        }
        for (int rest = count % 8; rest > 0; rest--) {
            m = Math.max(m, Math.abs(x.get(i)));
            i += stride;
        }
        return m;
    }

    /**
     * The largest of the low 15 bits (exponent and significand: the magnitude) of a bf16 or fp16
     * array's elements {@code 4q .. 4q + 3} for quads {@code q = first, first + stride, ...}, four
     * quads in flight, plus the last {@code n mod 4} elements in thread 0, read as raw bits. A quad's
     * elements lie side by side from a multiple of 4, so the kernel's vector form reads each quad in
     * one 8-byte load (the compiler's {@code AdjacentLoads}).
     */
    private static int largestBits(SixteenBitFloatArray x, int first, int stride) {
        int n = x.getSize();
        int quads = n >> 2;
        int count = first < quads ? (quads - first - 1) / stride + 1 : 0;
        int m = 0;
        int e = 4 * first;
        int step = 4 * stride;
        for (int groups = count / 4; groups > 0; groups--) {
            int e1 = e + step;
            int e2 = e1 + step;
            int e3 = e2 + step;
            int q0 = largestOfQuad(x, e);
            int q1 = largestOfQuad(x, e1);
            int q2 = largestOfQuad(x, e2);
            int q3 = largestOfQuad(x, e3);
            e = e3 + step;
            m = Math.max(m, Math.max(Math.max(q0, q1), Math.max(q2, q3)));
        }
        for (int rest = count % 4; rest > 0; rest--) {
            m = Math.max(m, largestOfQuad(x, e));
            e += step;
        }
        if (first == 0) {
            for (int i = 4 * quads; i < n; i++) {
                m = Math.max(m, x.getBits(i) & 0x7fff);
            }
        }
        return m;
    }

    /** The largest magnitude bits of elements {@code e .. e + 3}. */
    private static int largestOfQuad(SixteenBitFloatArray x, int e) {
        return Math.max(Math.max(x.getBits(e) & 0x7fff, x.getBits(e + 1) & 0x7fff), Math.max(x.getBits(e + 2) & 0x7fff, x.getBits(e + 3) & 0x7fff));
    }

    /**
     * The sum of {@code value} over the threads of this work group, in fp64, by a tree in
     * group-local memory (any group size up to 1024): every thread of the group must call it,
     * and every thread gets the sum.
     */
    private static double groupSum(KernelContext ctx, double value) {
        double[] partial = ctx.allocateDoubleLocalArray(1024);
        int t = ctx.localIdx();
        partial[t] = value;
        ctx.localBarrier();
        int width = ctx.localSize();
        while (width > 1) {
            int half = (width + 1) >> 1;
            if (t + half < width) {
                partial[t] += partial[t + half];
            }
            ctx.localBarrier();
            width = half;
        }
        return partial[0];
    }

    /**
     * Sum of squares of {@code x} as fp64 partials, deterministic (no atomics): slot {@code p} gets
     * {@link #squares} of elements {@code p, p + P, p + 2P, ...} ({@code P} = number of slots);
     * the caller adds the slots in fp64. Correct for any launch size; one thread per slot is the
     * natural launch.
     */
    public static void sumOfSquaresPartials(KernelContext ctx, FloatArray x, DoubleArray partials) {
        int slots = partials.getSize();
        for (int p = ctx.globalIdx(); p < slots; p += ctx.globalSize()) {
            partials.set(p, squares(x, p, slots));
        }
    }

    /**
     * Adds the sum of squares of {@code x} to {@code result[0]} (zero it first). Each thread sums
     * its grid-stride share in fp64, the group adds its threads' sums in group-local memory
     * ({@link #groupSum}), and one thread per group adds that atomically: launch a bounded number
     * of threads in whole groups (the built-in launch), not one per element.
     */
    public static void sumOfSquares(KernelContext ctx, FloatArray x, FloatArray result) {
        double sum = groupSum(ctx, squares(x, ctx.globalIdx(), ctx.globalSize()));
        if (ctx.localIdx() == 0) {
            Atomics.add(result, 0, (float) sum);
        }
    }

    /**
     * The fp64 sum of squares of {@code x[first]}, {@code x[first + stride]}, ...: element
     * {@code first + j * stride} goes into running sum {@code j mod 8} while whole groups of eight
     * remain, the rest into sum 0, and the eight sums are added pairwise. Eight independent loads
     * per thread are in flight at once: these kernels are bound by load latency, not arithmetic.
     */
    static double squares(FloatArray x, int first, int stride) {
        int n = x.getSize();
        // elements this thread sums: counted once, so the index below never runs past n; in int
        // (n - first - 1 cannot overflow), as a 64-bit division costs tens of instructions on a GPU
        int count = first < n ? (n - first - 1) / stride + 1 : 0;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;
        int i = first;
        for (int groups = count / 8; groups > 0; groups--) {
            double v0 = x.get(i);
            double v1 = x.get(i + stride);
            double v2 = x.get(i + 2 * stride);
            double v3 = x.get(i + 3 * stride);
            double v4 = x.get(i + 4 * stride);
            double v5 = x.get(i + 5 * stride);
            double v6 = x.get(i + 6 * stride);
            double v7 = x.get(i + 7 * stride);
            i += 8 * stride;
            s0 += v0 * v0;
            s1 += v1 * v1;
            s2 += v2 * v2;
            s3 += v3 * v3;
            s4 += v4 * v4;
            s5 += v5 * v5;
            s6 += v6 * v6;
            s7 += v7 * v7;
        }
        for (int rest = count % 8; rest > 0; rest--) {
            double v = x.get(i);
            i += stride;
            s0 += v * v;
        }
        return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    }

    /**
     * Sets {@code flag[0] = 1} if any element is NaN or infinite (its exponent bits all ones);
     * never clears it (zero it first). As {@link #checkFinite}, on the raw bits.
     */
    public static void checkFiniteBf16(KernelContext ctx, Bfloat16Array x, IntArray flag) {
        if (largestBits(x, ctx.globalIdx(), ctx.globalSize()) >= 0x7f80) {
            flag.set(0, 1);
        }
    }

    /**
     * Sum of squares of {@code x} as fp64 partials, deterministic (no atomics): slot {@code p} gets
     * {@link #squares16} of elements {@code p, p + P, p + 2P, ...} ({@code P} = number of slots);
     * the caller adds the slots in fp64. Correct for any launch size; one thread per slot is the
     * natural launch.
     */
    public static void sumOfSquaresPartialsBf16(KernelContext ctx, Bfloat16Array x, DoubleArray partials) {
        partials16(ctx, x, partials, true);
    }

    /**
     * Adds the sum of squares of {@code x} to {@code result[0]} (zero it first). Each thread sums
     * its grid-stride share in fp64, the group adds its threads' sums in group-local memory
     * ({@link #groupSum}), and one thread per group adds that atomically: launch a bounded number
     * of threads in whole groups (the built-in launch), not one per element.
     */
    public static void sumOfSquaresBf16(KernelContext ctx, Bfloat16Array x, FloatArray result) {
        double sum = groupSum(ctx, squaresOfQuads16(x, ctx.globalIdx(), ctx.globalSize(), true));
        if (ctx.localIdx() == 0) {
            Atomics.add(result, 0, (float) sum);
        }
    }

    /**
     * As {@link #squares} for bf16 and fp16 ({@code x} either: the parent type is enough), the same
     * elements into the same eight sums. Each square comes from the element's magnitude bits
     * ({@link #square16}); the largest magnitude bits, kept beside the sums, decide NaN and
     * infinity at the end as the squares would have: NaN if any element is NaN, else infinity if
     * any is infinite.
     */
    static double squares16(SixteenBitFloatArray x, int first, int stride, boolean bf16) {
        int n = x.getSize();
        // elements this thread sums: counted once, so the index below never runs past n; in int
        // (n - first - 1 cannot overflow), as a 64-bit division costs tens of instructions on a GPU
        int count = first < n ? (n - first - 1) / stride + 1 : 0;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;
        int m = 0;
        int i = first;
        for (int groups = count / 8; groups > 0; groups--) {
            int v0 = x.getBits(i) & 0x7fff;
            int v1 = x.getBits(i + stride) & 0x7fff;
            int v2 = x.getBits(i + 2 * stride) & 0x7fff;
            int v3 = x.getBits(i + 3 * stride) & 0x7fff;
            int v4 = x.getBits(i + 4 * stride) & 0x7fff;
            int v5 = x.getBits(i + 5 * stride) & 0x7fff;
            int v6 = x.getBits(i + 6 * stride) & 0x7fff;
            int v7 = x.getBits(i + 7 * stride) & 0x7fff;
            i += 8 * stride;
            m = Math.max(m, Math.max(Math.max(Math.max(v0, v1), Math.max(v2, v3)), Math.max(Math.max(v4, v5), Math.max(v6, v7))));
            s0 = plusSquare16(s0, v0, bf16);
            s1 = plusSquare16(s1, v1, bf16);
            s2 = plusSquare16(s2, v2, bf16);
            s3 = plusSquare16(s3, v3, bf16);
            s4 = plusSquare16(s4, v4, bf16);
            s5 = plusSquare16(s5, v5, bf16);
            s6 = plusSquare16(s6, v6, bf16);
            s7 = plusSquare16(s7, v7, bf16);
        }
        for (int rest = count % 8; rest > 0; rest--) {
            int v = x.getBits(i) & 0x7fff;
            i += stride;
            m = Math.max(m, v);
            s0 = plusSquare16(s0, v, bf16);
        }
        return finiteOr(((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), m, bf16);
    }

    /**
     * Sets {@code flag[0] = 1} if any element is NaN or infinite (its exponent bits all ones);
     * never clears it (zero it first). As {@link #checkFinite}, on the raw bits.
     */
    public static void checkFiniteF16(KernelContext ctx, HalfArray x, IntArray flag) {
        if (largestBits(x, ctx.globalIdx(), ctx.globalSize()) >= 0x7c00) {
            flag.set(0, 1);
        }
    }

    /**
     * Sum of squares of {@code x} as fp64 partials, deterministic (no atomics): slot {@code p} gets
     * {@link #squares16} of elements {@code p, p + P, p + 2P, ...} ({@code P} = number of slots);
     * the caller adds the slots in fp64. Correct for any launch size; one thread per slot is the
     * natural launch.
     */
    public static void sumOfSquaresPartialsF16(KernelContext ctx, HalfArray x, DoubleArray partials) {
        partials16(ctx, x, partials, false);
    }

    /**
     * The 16-bit partials: slot {@code p} gets {@link #squares16} of elements {@code p, p + P, ...}.
     * With an even slot count a thread takes slots {@code 2q} and {@code 2q + 1} together
     * ({@link #squares16Pair}): their elements lie side by side, so the kernel's vector form reads
     * both in one 4-byte load, the same sums in the same order.
     */
    private static void partials16(KernelContext ctx, SixteenBitFloatArray x, DoubleArray partials, boolean bf16) {
        int slots = partials.getSize();
        if ((slots & 1) == 0) {
            int half = slots >> 1;
            int n = x.getSize();
            for (int q = ctx.globalIdx(); q < half; q += ctx.globalSize()) {
                int p = 2 * q;
                // the two slots' counts differ by one at most; where that splits a group of eight
                // (one pair of a launch at most), each slot alone
                if (groupsOfEight(n, p, slots) == groupsOfEight(n, p + 1, slots)) {
                    squares16Pair(x, p, 2 * half, bf16, partials);
                } else {
                    partials.set(p, squares16(x, p, slots, bf16));
                    partials.set(p + 1, squares16(x, p + 1, slots, bf16));
                }
            }
        } else {
            for (int p = ctx.globalIdx(); p < slots; p += ctx.globalSize()) {
                partials.set(p, squares16(x, p, slots, bf16));
            }
        }
    }

    /** Whole groups of eight among slot {@code p}'s elements {@code p, p + slots, ...} of {@code n}. */
    private static int groupsOfEight(int n, int p, int slots) {
        return (p < n ? (n - p - 1) / slots + 1 : 0) / 8;
    }

    /**
     * Sets {@code partials[first]} and {@code partials[first + 1]} to {@link #squares16} of their
     * elements, stride {@code step} (the slot count, even, as {@code first} is), for two slots with
     * as many whole groups of eight: the groups run side by side, each element into the running sum
     * it has in {@code squares16}; then each slot's rest into its sum 0, in order.
     */
    private static void squares16Pair(SixteenBitFloatArray x, int first, int step, boolean bf16, DoubleArray partials) {
        int n = x.getSize();
        int countA = first < n ? (n - first - 1) / step + 1 : 0;
        int countB = first + 1 < n ? (n - first - 2) / step + 1 : 0;
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, a4 = 0.0, a5 = 0.0, a6 = 0.0, a7 = 0.0;
        double b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0, b4 = 0.0, b5 = 0.0, b6 = 0.0, b7 = 0.0;
        int ma = 0;
        int mb = 0;
        int e = first;
        for (int groups = countB / 8; groups > 0; groups--) {
            int e1 = e + step;
            int e2 = e1 + step;
            int e3 = e2 + step;
            int e4 = e3 + step;
            int e5 = e4 + step;
            int e6 = e5 + step;
            int e7 = e6 + step;
            int u0 = x.getBits(e) & 0x7fff, v0 = x.getBits(e + 1) & 0x7fff;
            int u1 = x.getBits(e1) & 0x7fff, v1 = x.getBits(e1 + 1) & 0x7fff;
            int u2 = x.getBits(e2) & 0x7fff, v2 = x.getBits(e2 + 1) & 0x7fff;
            int u3 = x.getBits(e3) & 0x7fff, v3 = x.getBits(e3 + 1) & 0x7fff;
            int u4 = x.getBits(e4) & 0x7fff, v4 = x.getBits(e4 + 1) & 0x7fff;
            int u5 = x.getBits(e5) & 0x7fff, v5 = x.getBits(e5 + 1) & 0x7fff;
            int u6 = x.getBits(e6) & 0x7fff, v6 = x.getBits(e6 + 1) & 0x7fff;
            int u7 = x.getBits(e7) & 0x7fff, v7 = x.getBits(e7 + 1) & 0x7fff;
            e = e7 + step;
            ma = Math.max(ma, Math.max(Math.max(Math.max(u0, u1), Math.max(u2, u3)), Math.max(Math.max(u4, u5), Math.max(u6, u7))));
            mb = Math.max(mb, Math.max(Math.max(Math.max(v0, v1), Math.max(v2, v3)), Math.max(Math.max(v4, v5), Math.max(v6, v7))));
            a0 = plusSquare16(a0, u0, bf16);
            a1 = plusSquare16(a1, u1, bf16);
            a2 = plusSquare16(a2, u2, bf16);
            a3 = plusSquare16(a3, u3, bf16);
            a4 = plusSquare16(a4, u4, bf16);
            a5 = plusSquare16(a5, u5, bf16);
            a6 = plusSquare16(a6, u6, bf16);
            a7 = plusSquare16(a7, u7, bf16);
            b0 = plusSquare16(b0, v0, bf16);
            b1 = plusSquare16(b1, v1, bf16);
            b2 = plusSquare16(b2, v2, bf16);
            b3 = plusSquare16(b3, v3, bf16);
            b4 = plusSquare16(b4, v4, bf16);
            b5 = plusSquare16(b5, v5, bf16);
            b6 = plusSquare16(b6, v6, bf16);
            b7 = plusSquare16(b7, v7, bf16);
        }
        int restA = countA % 8; // the slots have as many whole groups (see partials16)
        int i = e;
        for (; restA > 0; restA--) {
            int u = x.getBits(i) & 0x7fff;
            i += step;
            ma = Math.max(ma, u);
            a0 = plusSquare16(a0, u, bf16);
        }
        i = e + 1;
        for (int rest = countB % 8; rest > 0; rest--) {
            int v = x.getBits(i) & 0x7fff;
            i += step;
            mb = Math.max(mb, v);
            b0 = plusSquare16(b0, v, bf16);
        }
        partials.set(first, finiteOr(((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)), ma, bf16));
        partials.set(first + 1, finiteOr(((b0 + b1) + (b2 + b3)) + ((b4 + b5) + (b6 + b7)), mb, bf16));
    }

    /**
     * Adds the sum of squares of {@code x} to {@code result[0]} (zero it first). Each thread sums
     * its grid-stride share in fp64, the group adds its threads' sums in group-local memory
     * ({@link #groupSum}), and one thread per group adds that atomically: launch a bounded number
     * of threads in whole groups (the built-in launch), not one per element.
     */
    public static void sumOfSquaresF16(KernelContext ctx, HalfArray x, FloatArray result) {
        double sum = groupSum(ctx, squaresOfQuads16(x, ctx.globalIdx(), ctx.globalSize(), false));
        if (ctx.localIdx() == 0) {
            Atomics.add(result, 0, (float) sum);
        }
    }

    /**
     * The sum of squares of a bf16 or fp16 array's elements {@code 4q .. 4q + 3} for quads
     * {@code q = first, first + stride, ...}, four quads (sixteen loads) in flight, plus the last
     * {@code n mod 4} elements in thread 0: as {@link #squares16}, in an order only the atomic sums
     * may take. A quad's elements lie side by side from a multiple of 4: the kernel's vector form
     * reads each quad in one 8-byte load (the compiler's {@code AdjacentLoads}), where four 2-byte
     * loads bounded these sums by their count of load instructions.
     */
    private static double squaresOfQuads16(SixteenBitFloatArray x, int first, int stride, boolean bf16) {
        int n = x.getSize();
        int quads = n >> 2;
        // in long, unlike the others: NVIDIA's OpenCL makes this kernel slower from the int form (bench/RESULTS.md)
        int count = first < quads ? (int) (((long) quads - first + stride - 1) / stride) : 0;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        int m = 0;
        int e = 4 * first;
        int step = 4 * stride;
        for (int groups = count / 4; groups > 0; groups--) {
            int e1 = e + step;
            int e2 = e1 + step;
            int e3 = e2 + step;
            int a0 = x.getBits(e) & 0x7fff, b0 = x.getBits(e + 1) & 0x7fff, c0 = x.getBits(e + 2) & 0x7fff, d0 = x.getBits(e + 3) & 0x7fff;
            int a1 = x.getBits(e1) & 0x7fff, b1 = x.getBits(e1 + 1) & 0x7fff, c1 = x.getBits(e1 + 2) & 0x7fff, d1 = x.getBits(e1 + 3) & 0x7fff;
            int a2 = x.getBits(e2) & 0x7fff, b2 = x.getBits(e2 + 1) & 0x7fff, c2 = x.getBits(e2 + 2) & 0x7fff, d2 = x.getBits(e2 + 3) & 0x7fff;
            int a3 = x.getBits(e3) & 0x7fff, b3 = x.getBits(e3 + 1) & 0x7fff, c3 = x.getBits(e3 + 2) & 0x7fff, d3 = x.getBits(e3 + 3) & 0x7fff;
            e = e3 + step;
            m = Math.max(m, Math.max(Math.max(Math.max(a0, a1), Math.max(a2, a3)), Math.max(Math.max(b0, b1), Math.max(b2, b3))));
            m = Math.max(m, Math.max(Math.max(Math.max(c0, c1), Math.max(c2, c3)), Math.max(Math.max(d0, d1), Math.max(d2, d3))));
            s0 += plusSquare16(square16(b0, bf16), a0, bf16) + plusSquare16(square16(d0, bf16), c0, bf16);
            s1 += plusSquare16(square16(b1, bf16), a1, bf16) + plusSquare16(square16(d1, bf16), c1, bf16);
            s2 += plusSquare16(square16(b2, bf16), a2, bf16) + plusSquare16(square16(d2, bf16), c2, bf16);
            s3 += plusSquare16(square16(b3, bf16), a3, bf16) + plusSquare16(square16(d3, bf16), c3, bf16);
        }
        for (int rest = count % 4; rest > 0; rest--) {
            int a = x.getBits(e) & 0x7fff, b = x.getBits(e + 1) & 0x7fff, c = x.getBits(e + 2) & 0x7fff, d = x.getBits(e + 3) & 0x7fff;
            e += step;
            m = Math.max(m, Math.max(Math.max(a, b), Math.max(c, d)));
            s0 += plusSquare16(square16(b, bf16), a, bf16) + plusSquare16(square16(d, bf16), c, bf16);
        }
        if (first == 0) {
            for (int i = 4 * quads; i < n; i++) {
                int a = x.getBits(i) & 0x7fff;
                m = Math.max(m, a);
                s0 += square16(a, bf16);
            }
        }
        return finiteOr((s0 + s1) + (s2 + s3), m, bf16);
    }

    /**
     * {@code sum}, or what the squares would have made it, decided by the largest magnitude bits
     * {@code m} among its elements: NaN if one is NaN, else infinity if one is infinite.
     */
    private static double finiteOr(double sum, int m, boolean bf16) {
        int infinity = bf16 ? 0x7f80 : 0x7c00;
        if (m >= infinity) {
            return m > infinity ? Double.NaN : Double.POSITIVE_INFINITY;
        }
        return sum;
    }

    /**
     * The exact fp64 square of the finite bf16 ({@code bf16}) or fp16 value whose magnitude bits
     * (sign cleared) are {@code t}. Exponent and significand go unchanged into the low bits of a
     * double's, which makes the double the value times a power of two (2^-896 for bf16, 2^-1008
     * for fp16, subnormals and zero too), and one multiply undoes that: integer work and fp64
     * multiplies, no conversion instruction, whose rate (a quarter of fp64's) bounds these sums.
     * The product of two 8- or 11-bit significands is exact. Infinity and NaN bits give a finite
     * value here: the caller handles them. Kernels pass {@code bf16} as a constant, so the compiler
     * keeps one branch.
     */
    static double square16(int t, boolean bf16) {
        double v = value16(t, bf16);
        return v * v;
    }

    /**
     * {@code s + square16(t, bf16)}: the square is exact, so adding it rounds once either way, and
     * one fma (a GPU instruction fewer per element) gives the same bits.
     */
    private static double plusSquare16(double s, int t, boolean bf16) {
        double v = value16(t, bf16);
        return Math.fma(v, v, s);
    }

    /** The value {@link #square16} squares: exact, from the magnitude bits alone. */
    private static double value16(int t, boolean bf16) {
        return bf16 ? Double.longBitsToDouble((long) t << 45) * 0x1p896 : Double.longBitsToDouble((long) t << 42) * 0x1p1008;
    }
}
