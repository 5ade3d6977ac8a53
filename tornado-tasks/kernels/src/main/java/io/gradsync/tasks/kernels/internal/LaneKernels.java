package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.HalfFloats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The averages in SIMD lanes of the incubating {@code jdk.incubator.vector}: {@link Lanes}' work,
 * in a class of its own because loading it needs the module. The bits of the average kernels: the
 * float64 sum in replica order, divided as {@link Quotients#divide} does, rounded once (fp32
 * directly; bf16 through the float rounded to odd). A loop reads straight from the segments, which
 * a plain loop over several segments does not do in vectors (C2 cannot rule out that they overlap).
 *
 * <p>Thread-safety: stateless.
 */
final class LaneKernels {
    // No vector helper here is shared with LaneWords, whose ints are twice as wide: C2 profiles a
    // helper once for all its callers, and one that sees two vector classes loses its intrinsics in
    // both (every vector boxed, a fortieth of the speed, bench/RESULTS.md). Hence the rounding to
    // bf16 written again below, for these lanes' shape.
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    /** Elements a step: the float64 lanes of the widest vector. */
    static final int LANES = D.length();
    private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, VectorShape.forBitSize(32 * LANES));
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, VectorShape.forBitSize(32 * LANES));
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * LANES));
    /** Floats of the float64 lanes' width: twice as many. */
    private static final VectorSpecies<Float> WIDE = VectorSpecies.of(float.class, D.vectorShape());
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private LaneKernels() {
    }

    /** Whether these lanes suit the host: a float64 vector of 4 to 8 lanes, so that the narrower shapes below exist. */
    static boolean suits() {
        return LANES >= 4 && D.vectorBitSize() <= 512;
    }

    /** See {@link Lanes#average}. A dispatch small enough for C2 to inline: the loops are methods of their own. */
    static void average(boolean bf16, MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        if (in.length == 2 && k == 2 && (out.length == 2 || !bf16 && out.length == 1)) {
            // a method per output count and type: no test inside a loop (see fixedCount)
            if (out.length == 1) {
                twoFp32(in[0], in[1], out[0], from, steps);
            } else if (bf16) {
                twoBf16IntoBoth(in[0], in[1], out[0], out[1], from, steps);
            } else {
                twoFp32IntoBoth(in[0], in[1], out[0], out[1], from, steps);
            }
        } else if (!bf16 && out.length == 1 && in.length <= 8) {
            fixedCount(in, out[0], from, steps, k);
        } else if (bf16) {
            anyCountBf16(in, out, from, steps, k);
        } else {
            anyCountF32(in, out, from, steps, k);
        }
    }

    /**
     * The float64 sum of the squares of elements {@code [from, to)}, fp32 or bf16, in no fixed
     * order (two running sums of lanes; bf16 two elements to a word): {@code sumOfSquares}. A loop
     * per type: one loop testing the type, first compiled for one, fell to a tenth of its speed
     * when the other came (see {@link #fixedCount}).
     */
    // A method a type from the entry down, as the other forms have: one method for two types is
    // compiled while one of them runs, with the other's loop left to a recompilation later.

    static double sumOfSquaresF32(MemorySegment x, long from, long to) {
        long end = to - (to - from) % LANES;
        double sum = squaresF32(x, from, end);
        for (long i = end; i < to; i++) {
            double v = x.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            sum += v * v;
        }
        return sum;
    }

    static double sumOfSquaresBf16(MemorySegment x, long from, long to) {
        long end = to - (to - from) % (2 * LANES);
        double sum = squaresBf16(x, from, end);
        for (long i = end; i < to; i++) {
            double v = HalfFloats.bf16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            sum += v * v;
        }
        return sum;
    }

    /** As {@link #sumOfSquaresF32} for fp16 elements: {@code sumOfSquaresF16}. */
    static double sumOfSquaresF16(MemorySegment x, long from, long to) {
        long end = to - (to - from) % (2 * LANES);
        double sum = squaresF16(x, from, end);
        for (long i = end; i < to; i++) {
            double v = Float.float16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            sum += v * v;
        }
        return sum;
    }

    // The squares' loops keep eight running sums: each fused multiply-add waits for the one before
    // it in its sum, and eight sums hide that wait where two did not (bench/RESULTS.md, session 28).
    // A pass adds into four of them, which then trade places with the other four: eight sums with
    // the code of four (a pass of eight was too large for C2 to inline the Vector API's calls).
    // Whole passes, then the last vectors one at a time into the first sum.

    private static double squaresF32(MemorySegment x, long from, long end) {
        DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        long i = from;
        for (; i <= end - 4 * LANES; i += 4 * LANES) {
            DoubleVector v0 = load(false, x, i), v1 = load(false, x, i + LANES);
            DoubleVector v2 = load(false, x, i + 2 * LANES), v3 = load(false, x, i + 3 * LANES);
            DoubleVector t0 = v0.fma(v0, a0), t1 = v1.fma(v1, a1), t2 = v2.fma(v2, a2), t3 = v3.fma(v3, a3);
            a0 = a4; a1 = a5; a2 = a6; a3 = a7;
            a4 = t0; a5 = t1; a6 = t2; a7 = t3;
        }
        for (; i < end; i += LANES) {
            DoubleVector v = load(false, x, i);
            a0 = v.fma(v, a0);
        }
        return a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7))).reduceLanes(VectorOperators.ADD);
    }

    private static double squaresBf16(MemorySegment x, long from, long end) {
        DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        long i = from;
        for (; i <= end - 4 * LANES; i += 4 * LANES) {
            IntVector w0 = IntVector.fromMemorySegment(I, x, 2 * i, ORDER);
            IntVector w1 = IntVector.fromMemorySegment(I, x, 2 * i + 4 * LANES, ORDER);
            DoubleVector u0 = (DoubleVector) w0.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v0 = (DoubleVector) w0.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector u1 = (DoubleVector) w1.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v1 = (DoubleVector) w1.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector t0 = u0.fma(u0, a0), t1 = v0.fma(v0, a1), t2 = u1.fma(u1, a2), t3 = v1.fma(v1, a3);
            a0 = a4; a1 = a5; a2 = a6; a3 = a7;
            a4 = t0; a5 = t1; a6 = t2; a7 = t3;
        }
        for (; i < end; i += 2 * LANES) {
            IntVector w = IntVector.fromMemorySegment(I, x, 2 * i, ORDER);
            DoubleVector u = (DoubleVector) w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v = (DoubleVector) w.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            a0 = u.fma(u, a0);
            a1 = v.fma(v, a1);
        }
        return a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7))).reduceLanes(VectorOperators.ADD);
    }

    /**
     * fp16 squares. A half's magnitude shifted into a float's exponent and fraction is that value
     * times 2^-112 (subnormals too), so the lanes add the squares times 2^-224, scaled back at the
     * end: exact, as no step comes near the float64 range's ends. That maps neither an infinity nor
     * a NaN, which the largest magnitude seen stands for instead.
     */
    private static double squaresF16(MemorySegment x, long from, long end) {
        DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        IntVector largest = IntVector.zero(I);
        long i = from;
        for (; i <= end - 4 * LANES; i += 4 * LANES) {
            IntVector w0 = IntVector.fromMemorySegment(I, x, 2 * i, ORDER);
            IntVector w1 = IntVector.fromMemorySegment(I, x, 2 * i + 4 * LANES, ORDER);
            IntVector m0 = w0.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
            IntVector m1 = w0.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
            IntVector m2 = w1.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
            IntVector m3 = w1.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
            DoubleVector v0 = (DoubleVector) m0.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v1 = (DoubleVector) m1.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v2 = (DoubleVector) m2.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v3 = (DoubleVector) m3.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector t0 = v0.fma(v0, a0), t1 = v1.fma(v1, a1), t2 = v2.fma(v2, a2), t3 = v3.fma(v3, a3);
            a0 = a4; a1 = a5; a2 = a6; a3 = a7;
            a4 = t0; a5 = t1; a6 = t2; a7 = t3;
            // the running maximum an argument, never the receiver: a loop variable's vector class is
            // unknown where C2 parses the call, which then goes by the JVM-wide profile of the
            // vector classes (see PartialsPerStep)
            largest = m0.max(m1).max(m2.max(m3)).max(largest);
        }
        for (; i < end; i += 2 * LANES) {
            IntVector w = IntVector.fromMemorySegment(I, x, 2 * i, ORDER);
            IntVector m = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
            IntVector n = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
            DoubleVector u = (DoubleVector) m.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v = (DoubleVector) n.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            a0 = u.fma(u, a0);
            a1 = v.fma(v, a1);
            largest = m.max(n).max(largest);
        }
        int top = largest.reduceLanes(VectorOperators.MAX);
        if (top >= PartialsPerStep.F16_INFINITY) {
            return top > PartialsPerStep.F16_INFINITY ? Double.NaN : Double.POSITIVE_INFINITY;
        }
        return a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7))).reduceLanes(VectorOperators.ADD) * 0x1p224;
    }

    // Any inputs and outputs, a loop over each per step: the host's all-reduce of a small piece
    // among 3 or more replicas (a method per type, see fixedCount).

    private static void anyCountF32(MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        DoubleVector kv = DoubleVector.broadcast(D, k);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / k);
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = load(false, in[0], i);
            for (int r = 1; r < in.length; r++) {
                sum = sum.add(load(false, in[r], i));
            }
            FloatVector f = (FloatVector) divide(sum, kv, rv).convertShape(VectorOperators.D2F, F, 0);
            for (MemorySegment m : out) {
                f.intoMemorySegment(m, 4 * i, ORDER);
            }
        }
    }

    private static void anyCountBf16(MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        DoubleVector kv = DoubleVector.broadcast(D, k);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / k);
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = load(true, in[0], i);
            for (int r = 1; r < in.length; r++) {
                sum = sum.add(load(true, in[r], i));
            }
            ShortVector b = bf16(divide(sum, kv, rv));
            for (MemorySegment m : out) {
                b.intoMemorySegment(m, 2 * i, ORDER);
            }
        }
    }

    // Two replicas and k = 2 (the common case), written out: the sum halved is exact. fp32 into one
    // output (a kernel's; bf16 kernels take LaneWords), or into both inputs (the host's all-reduce).

    // A step of 2 * LANES floats where their float sum is finite (see finite); the rare step whose
    // sum is not, and the last LANES where the count of steps is odd, one element at a time (vector
    // code run that seldom is left to C1 by C2, and C1 runs the Vector API's Java: RESULTS).

    private static void twoFp32(MemorySegment a, MemorySegment b, MemorySegment out, long from, long steps) {
        long end = from + steps * LANES;
        long i = from;
        for (; i + 2 * LANES <= end; i += 2 * LANES) {
            FloatVector sum = wide(a, i).add(wide(b, i));
            if (finite(sum)) {
                sum.mul(0.5f).intoMemorySegment(out, 4 * i, ORDER);
            } else {
                halfSums(a, b, out, out, i, i + 2 * LANES);
            }
        }
        halfSums(a, b, out, out, i, end);
    }

    private static void twoFp32IntoBoth(MemorySegment a, MemorySegment b, MemorySegment outA, MemorySegment outB, long from, long steps) {
        long end = from + steps * LANES;
        long i = from;
        for (; i + 2 * LANES <= end; i += 2 * LANES) {
            FloatVector sum = wide(a, i).add(wide(b, i));
            if (finite(sum)) {
                FloatVector f = sum.mul(0.5f);
                f.intoMemorySegment(outA, 4 * i, ORDER);
                f.intoMemorySegment(outB, 4 * i, ORDER);
            } else {
                halfSums(a, b, outA, outB, i, i + 2 * LANES);
            }
        }
        halfSums(a, b, outA, outB, i, end);
    }

    /**
     * See {@link Lanes#averageFp32Pieces}: one loop over the pieces, two replicas as
     * {@link #twoFp32IntoBoth} does them, three by a loop of their own, more by
     * {@link #anyCountF32}; the elements past the last whole step one at a time.
     */
    static void fp32Pieces(MemorySegment[][] pieces, long[] from, long[] to) {
        for (int p = 0; p < pieces.length; p++) {
            MemorySegment[] m = pieces[p];
            long i = from[p];
            long end = to[p];
            long steps = (end - i) / LANES;
            if (m.length == 2) {
                twoFp32IntoBoth(m[0], m[1], m[0], m[1], i, steps);
                halfSums(m[0], m[1], m[0], m[1], i + steps * LANES, end);
                continue;
            }
            if (m.length == 3) {
                threeIntoAll(m[0], m[1], m[2], i, i + steps * LANES);
            } else {
                anyCountF32(m, m, i, steps, m.length);
            }
            meansOf(m, i + steps * LANES, end);
        }
    }

    /**
     * Three fp32 replicas' means into all three at {@code [from, end)} (whole steps), as
     * {@link #fixedCount} does them. Written with the Vector API alone: run once per short tensor,
     * it is compiled after helpers that other loops share (load, divide), which C2 may by then have
     * compiled on their own and no longer inline (every vector boxed: 2.5 times slower).
     */
    private static void threeIntoAll(MemorySegment a, MemorySegment b, MemorySegment c, long from, long end) {
        DoubleVector kv = DoubleVector.broadcast(D, 3);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / 3);
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = ((DoubleVector) FloatVector.fromMemorySegment(F, a, 4 * i, ORDER).convertShape(VectorOperators.F2D, D, 0))
                    .add((DoubleVector) FloatVector.fromMemorySegment(F, b, 4 * i, ORDER).convertShape(VectorOperators.F2D, D, 0))
                    .add((DoubleVector) FloatVector.fromMemorySegment(F, c, 4 * i, ORDER).convertShape(VectorOperators.F2D, D, 0));
            // Quotients.divide: the corrected product, or the product where the remainder is zero or NaN
            DoubleVector product = sum.mul(rv);
            DoubleVector remainder = product.neg().fma(kv, sum);
            DoubleVector quotient = remainder.fma(rv, product)
                    .blend(product, remainder.compare(VectorOperators.EQ, 0).or(remainder.compare(VectorOperators.NE, remainder)));
            FloatVector q = (FloatVector) quotient.convertShape(VectorOperators.D2F, F, 0);
            q.intoMemorySegment(a, 4 * i, ORDER);
            q.intoMemorySegment(b, 4 * i, ORDER);
            q.intoMemorySegment(c, 4 * i, ORDER);
        }
    }

    /** Elements {@code [from, to)}: the mean of the fp32 replicas {@code m} as the kernels take it, into every replica. */
    private static void meansOf(MemorySegment[] m, long from, long to) {
        float k = m.length;
        double r = 1.0 / k;
        for (long i = from; i < to; i++) {
            double sum = m[0].getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i); // not 0 + ...: a sum of -0 stays -0
            for (int j = 1; j < m.length; j++) {
                sum += m[j].getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            }
            float q = (float) Quotients.divide(sum, k, r);
            for (MemorySegment s : m) {
                s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, q);
            }
        }
    }

    /** Elements {@code [from, to)}: the float64 mean of two fp32 replicas, into both outputs (which may be the same). */
    private static void halfSums(MemorySegment a, MemorySegment b, MemorySegment outA, MemorySegment outB, long from, long to) {
        for (long i = from; i < to; i++) {
            float m = (float) (((double) a.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i) + b.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i)) * 0.5);
            outA.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, m);
            outB.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, m);
        }
    }

    /** fp32 elements {@code [i, i + 2 * LANES)}. */
    private static FloatVector wide(MemorySegment m, long i) {
        return FloatVector.fromMemorySegment(WIDE, m, 4 * i, ORDER);
    }

    /**
     * Whether a float sum of two fp32 replicas is finite in every lane, so that it times a half is
     * their float64 mean rounded once: from 2^-125 up both the sum and its half are normal, and
     * halving is exact and commutes with the rounding; below that the sum of two multiples of
     * 2^-149 is exact, and only the halving rounds. Otherwise an input was not finite, or the sum
     * overflows where the mean does not: those steps go through float64. Twice the lanes of the
     * float64 steps, for the many small tensors of a model.
     */
    private static boolean finite(FloatVector sum) {
        return sum.abs().compare(VectorOperators.LE, Float.MAX_VALUE).allTrue();
    }

    /**
     * fp32, 2 to 8 inputs (2 with any {@code k} but 2), one output: a loop of its own per input
     * count, each input read straight into the sum. A test on the count inside one loop had C2 recompile it at every new count
     * until its vector helpers no longer inlined (too many nodes), which boxed every vector and ran
     * a tenth as fast; a loop over the inputs per step ran at 3/4 of this speed.
     */
    private static void fixedCount(MemorySegment[] in, MemorySegment out, long from, long steps, float divisor) {
        DoubleVector kv = DoubleVector.broadcast(D, divisor);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / divisor);
        // an int count of steps, not a long index against a long end: over a long index C2 hoisted a
        // profiled check out of the loops of 6 to 8 inputs whose trap then fired launch after
        // launch, each trap a recompilation (a tenth of the speed and less: bench/RESULTS.md, session 26)
        int count = Math.toIntExact(steps);
        switch (in.length) { // a method per count: C2 compiles each loop apart
            case 2 -> two(in, out, from, count, kv, rv);
            case 3 -> three(in, out, from, count, kv, rv);
            case 4 -> four(in, out, from, count, kv, rv);
            case 5 -> five(in, out, from, count, kv, rv);
            case 6 -> six(in, out, from, count, kv, rv);
            case 7 -> seven(in, out, from, count, kv, rv);
            default -> eight(in, out, from, count, kv, rv);
        }
    }

    private static void two(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = in[0], b = in[1];
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)), kv, rv), out, i);
        }
    }

    private static void three(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = in[0], b = in[1], c = in[2];
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)), kv, rv), out, i);
        }
    }

    private static void four(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = in[0], b = in[1], c = in[2], d = in[3];
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)), kv, rv), out, i);
        }
    }

    private static void five(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = in[0], b = in[1], c = in[2], d = in[3], e = in[4];
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)), kv, rv), out, i);
        }
    }

    private static void six(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = in[0], b = in[1], c = in[2], d = in[3], e = in[4], f = in[5];
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)).add(f64(f, i)), kv, rv), out, i);
        }
    }

    private static void seven(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = in[0], b = in[1], c = in[2], d = in[3], e = in[4], f = in[5], g = in[6];
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            DoubleVector sum = f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)).add(f64(f, i)).add(f64(g, i));
            store(divide(sum, kv, rv), out, i);
        }
    }

    private static void eight(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = in[0], b = in[1], c = in[2], d = in[3], e = in[4], f = in[5], g = in[6], h = in[7];
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            DoubleVector sum = f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)).add(f64(f, i)).add(f64(g, i))
                    .add(f64(h, i));
            store(divide(sum, kv, rv), out, i);
        }
    }

    private static DoubleVector f64(MemorySegment m, long i) {
        return load(false, m, i);
    }

    private static void store(DoubleVector q, MemorySegment out, long i) {
        ((FloatVector) q.convertShape(VectorOperators.D2F, F, 0)).intoMemorySegment(out, 4 * i, ORDER);
    }

    /**
     * Two bf16 replicas into both, in float lanes: {@code a * 0.5f + b * 0.5f} rounds to bf16 as their
     * float64 mean does (the halves are exact; see the average kernels' JVM form), then to nearest-even.
     */
    private static void twoBf16IntoBoth(MemorySegment a, MemorySegment b, MemorySegment outA, MemorySegment outB, long from, long steps) {
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            ShortVector m = halfSumBf16(a, b, i);
            m.intoMemorySegment(outA, 2 * i, ORDER);
            m.intoMemorySegment(outB, 2 * i, ORDER);
        }
    }

    private static ShortVector halfSumBf16(MemorySegment a, MemorySegment b, long i) {
        return nearestBf16(bf16Floats(a, i).mul(0.5f).add(bf16Floats(b, i).mul(0.5f)).reinterpretAsInts());
    }

    private static DoubleVector load(boolean bf16, MemorySegment m, long i) {
        FloatVector f = bf16 ? bf16Floats(m, i) : FloatVector.fromMemorySegment(F, m, 4 * i, ORDER);
        return (DoubleVector) f.convertShape(VectorOperators.F2D, D, 0);
    }

    /** bf16 elements as the floats they denote: the float's upper half (the sign extension shifts out). */
    private static FloatVector bf16Floats(MemorySegment m, long i) {
        IntVector w = (IntVector) ShortVector.fromMemorySegment(S, m, 2 * i, ORDER).convertShape(VectorOperators.S2I, I, 0);
        return w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /** {@link Quotients#divide}, lane by lane: the corrected product, or the product where the remainder is zero or NaN. */
    private static DoubleVector divide(DoubleVector sum, DoubleVector k, DoubleVector r) {
        DoubleVector q = sum.mul(r);
        DoubleVector remainder = q.neg().fma(k, sum);
        DoubleVector corrected = remainder.fma(r, q);
        VectorMask<Double> product = remainder.compare(VectorOperators.EQ, 0).or(remainder.compare(VectorOperators.NE, remainder));
        return corrected.blend(q, product);
    }

    /** {@code q} rounded once to bf16: to a float by round-to-odd, then to nearest-even (a NaN made quiet). */
    private static ShortVector bf16(DoubleVector q) {
        FloatVector f = (FloatVector) q.convertShape(VectorOperators.D2F, F, 0);
        DoubleVector back = (DoubleVector) f.convertShape(VectorOperators.F2D, D, 0);
        IntVector bits = f.reinterpretAsInts();
        // an inexact float with an even last bit steps to its odd neighbour on q's side of it
        VectorMask<Integer> inexact = back.compare(VectorOperators.NE, q).and(q.compare(VectorOperators.EQ, q)).cast(I);
        VectorMask<Integer> up = back.abs().compare(VectorOperators.LT, q.abs()).cast(I);
        VectorMask<Integer> even = bits.and(1).compare(VectorOperators.EQ, 0);
        bits = bits.add(IntVector.broadcast(I, -1).blend(1, up), inexact.and(even));
        return nearestBf16(bits);
    }

    /** Float bits rounded to the nearest bf16 (ties to even; a NaN made quiet), as {@code HalfFloats.floatToBf16}. */
    private static ShortVector nearestBf16(IntVector bits) {
        IntVector nan = bits.broadcast(0x7F80_0000).sub(bits.and(0x7FFF_FFFF)).lanewise(VectorOperators.ASHR, 31);
        IntVector bias = bits.lanewise(VectorOperators.LSHR, 16).and(1).add(0x7FFF).and(nan.not());
        IntVector nearest = bits.add(bias).or(nan.and(0x0040_0000));
        return (ShortVector) nearest.lanewise(VectorOperators.LSHR, 16).convertShape(VectorOperators.I2S, S, 0);
    }
}
