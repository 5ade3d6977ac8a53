package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.HalfFloats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The fp32 averages and the sums of squares in SIMD lanes of the incubating
 * {@code jdk.incubator.vector}: {@link Lanes}' work, in a class of its own because loading it needs
 * the module. The bits of the average kernels: the float64 sum in replica order, divided as
 * {@link Quotients#divide} does, rounded once to fp32 (the 16-bit averages are {@link LaneWords}').
 * A loop reads straight from the segments, which a plain loop over several segments does not do in
 * vectors (C2 cannot rule out that they overlap).
 *
 * <p>Thread-safety: stateless.
 */
final class LaneKernels {
    // One shape, the float64 lanes', for every lane type here, as in LaneWords (which says why): a
    // float or word vector holds twice a step's elements. The float64 lanes take its lower half
    // (the conversions' part 0, one instruction); its upper half is moved down first where a step
    // uses it. fp16 converts too: read as longs shifted into doubles' places instead, it changed
    // the Vector API's profile so that kernels run after it lost their inlining in some runs
    // (bench/RESULTS.md, session 30). No vector helper here is shared with LaneWords: C2 profiles
    // a helper once for all its callers, and one that sees two vector classes loses its
    // intrinsics in both (every vector boxed, a fortieth of the speed, bench/RESULTS.md).
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    /** Elements a step: the float64 lanes of the widest vector. */
    static final int LANES = D.length();
    private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, D.vectorShape());
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, D.vectorShape());
    /** Lane picks that swap a float or word vector's halves: its upper half then converts as part 0. */
    static final VectorShuffle<Float> SWAP_F = VectorShuffle.fromOp(F, j -> (j + LANES) % (2 * LANES));
    static final VectorShuffle<Integer> SWAP_I = VectorShuffle.fromOp(I, j -> (j + LANES) % (2 * LANES));
    /** Lane picks joining the lower halves of two float vectors ({@code JOIN.selectFrom(lower, upper)}). */
    private static final FloatVector JOIN = FloatVector.fromArray(F, joinPicks(), 0);
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    /**
     * The class of native segments (and, below it, of mapped ones). The fp32 averages' loops cast
     * their segments to it before they store: the Vector API's own Java for a reinterpretation,
     * which runs until C2 compiles a loop, stores vectors into byte-array segments, and a store
     * that C2 compiles after that, not knowing its segment's kind, ran 1.7 to 3 times slower
     * (bench/RESULTS.md, session 40). The cast tells C2 the kind; segments of any other kind take
     * the elements one at a time ({@link #allNative}). The 16-bit partials' whole-row steps cast
     * theirs too.
     */
    static final Class<? extends MemorySegment> NATIVE = MemorySegment.NULL.getClass();

    private LaneKernels() {
    }

    /** Whether every segment is native memory (which the loops that cast to {@link #NATIVE} take alone). */
    static boolean allNative(MemorySegment... segments) {
        for (MemorySegment m : segments) {
            if (!NATIVE.isInstance(m)) {
                return false;
            }
        }
        return true;
    }

    /** Whether these lanes suit the host: a float64 vector of 4 to 8 lanes. */
    static boolean suits() {
        return LANES >= 4 && D.vectorBitSize() <= 512;
    }

    private static float[] joinPicks() {
        float[] picks = new float[2 * LANES];
        for (int j = 0; j < 2 * LANES; j++) {
            picks[j] = j < LANES ? j : j + LANES; // the second vector's lanes are numbered from 2 * LANES
        }
        return picks;
    }

    /** See {@link Lanes#averageF32}. A dispatch small enough for C2 to inline: the loops are methods of their own. */
    static void average(MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        if (!allNative(in) || !allNative(out)) {
            meansInto(in, out, from, from + steps * LANES, k);
            return;
        }
        if (in.length == 2 && k == 2 && out.length <= 2) {
            // a method per output count: no test inside a loop (see fixedCount)
            if (out.length == 1) {
                twoFp32(in[0], in[1], out[0], from, steps);
            } else {
                twoFp32IntoBoth(in[0], in[1], out[0], out[1], from, steps);
            }
        } else if (out.length == 1 && in.length <= 8) {
            fixedCount(in, out[0], from, steps, k);
        } else {
            anyCountF32(in, out, from, steps, k);
        }
    }

    /**
     * The float64 sum of the squares of elements {@code [from, to)}, fp32 or bf16, in the lanes'
     * fixed order (four running sums of lanes, joined, the lanes added in order, then the elements
     * past the passes; bf16 two elements to a word): {@code sumOfSquares}. A loop
     * per type: one loop testing the type, first compiled for one, fell to a tenth of its speed
     * when the other came (see {@link #fixedCount}).
     */
    // A method a type from the entry down, as the other forms have: one method for two types is
    // compiled while one of them runs, with the other's loop left to a recompilation later.

    static double sumOfSquaresF32(MemorySegment x, long from, long to) {
        long end = passesEnd(from, to, LANES);
        double sum = squaresF32(x, from, end);
        for (long i = end; i < to; i++) {
            double v = x.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            sum += v * v;
        }
        return sum;
    }

    static double sumOfSquaresBf16(MemorySegment x, long from, long to) {
        long end = passesEnd(from, to, 2 * LANES);
        double sum = squaresBf16(x, from, end);
        for (long i = end; i < to; i++) {
            double v = HalfFloats.bf16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            sum += v * v;
        }
        return sum;
    }

    /** As {@link #sumOfSquaresF32} for fp16 elements: {@code sumOfSquaresF16}. */
    static double sumOfSquaresF16(MemorySegment x, long from, long to) {
        long end = to - (to - from) % (4 * LANES);
        double sum = squaresF16(x, from, end);
        for (long i = end; i < to; i++) {
            double v = Float.float16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
            sum += v * v;
        }
        return sum;
    }

    // The squares' loops keep several running sums: each fused multiply-add waits for the one before
    // it in its sum, and more sums hide that wait where two did not (bench/RESULTS.md, session 28).
    // fp32 and bf16 keep four, one per vector of a pass: a pass's conversions outlast the wait. (Eight,
    // a pass adding into four that then traded places with the other four, cost twelve register
    // moves a pass; fp32 ran slower with them: session 31.) fp16's shorter pass keeps the eight.
    // fp32 and bf16 passes read a vector at every step and convert its lower half (a vector of two
    // steps read once and its halves swapped ran slower); the last one reaches a step past the pass.

    /**
     * Where whole passes of {@code 4 * LANES} elements from {@code from} end, each of whose vectors
     * (reaching {@code beyond} elements past the pass) lies within {@code to}; the rest is the caller's.
     */
    private static long passesEnd(long from, long to, int beyond) {
        long room = to - from - beyond;
        return room < 0 ? from : from + room / (4 * LANES) * (4 * LANES);
    }

    /** fp32 elements {@code [from, end)}, whole passes ({@link #passesEnd}). */
    private static double squaresF32(MemorySegment x, long from, long end) {
        DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0;
        for (long i = from; i < end; i += 4 * LANES * Lanes.uncountedOne) { // in address order (see Lanes)
            DoubleVector v0 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * i, ORDER).convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v1 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * i + 4 * LANES, ORDER).convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v2 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * i + 8 * LANES, ORDER).convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v3 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * i + 12 * LANES, ORDER).convertShape(VectorOperators.F2D, D, 0);
            a0 = v0.fma(v0, a0);
            a1 = v1.fma(v1, a1);
            a2 = v2.fma(v2, a2);
            a3 = v3.fma(v3, a3);
        }
        return inLaneOrder(a0.add(a1).add(a2.add(a3)).toArray());
    }

    /** bf16 elements {@code [from, end)}, whole passes ({@link #passesEnd}). */
    private static double squaresBf16(MemorySegment x, long from, long end) {
        DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0;
        for (long i = from; i < end; i += 4 * LANES * Lanes.uncountedOne) { // in address order (see Lanes)
            IntVector w0 = IntVector.fromMemorySegment(I, x, 2 * i, ORDER);
            IntVector w1 = IntVector.fromMemorySegment(I, x, 2 * i + 4 * LANES, ORDER);
            DoubleVector u0 = (DoubleVector) w0.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v0 = (DoubleVector) w0.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector u1 = (DoubleVector) w1.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            DoubleVector v1 = (DoubleVector) w1.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            a0 = u0.fma(u0, a0);
            a1 = v0.fma(v0, a1);
            a2 = u1.fma(u1, a2);
            a3 = v1.fma(v1, a3);
        }
        return inLaneOrder(a0.add(a1).add(a2.add(a3)).toArray());
    }

    /**
     * The lanes' sums added from lane 0 up: the fixed order the callers promise. Not
     * {@code reduceLanes(ADD)}, whose order for floating point is the JIT's to choose: C2 adds the
     * lanes as a tree where the interpreter adds them in order, so that the same elements summed
     * before and after compilation differed in the last bit (bench/RESULTS.md, session 40).
     */
    private static double inLaneOrder(double[] lanes) {
        double sum = 0;
        for (double v : lanes) {
            sum += v;
        }
        return sum;
    }

    /**
     * fp16 squares, elements as {@link #squaresBf16}. A half's magnitude shifted into a float's
     * exponent and fraction is that value times 2^-112 (subnormals too), so the lanes add the
     * squares times 2^-224, scaled back at the end: exact, as no step comes near the float64
     * range's ends. That maps neither an infinity nor a NaN, which the largest magnitude seen
     * stands for instead (a check of the sum, as the short partials make, would send the large
     * sums of loss-scaled gradients through a second pass).
     */
    private static double squaresF16(MemorySegment x, long from, long end) {
        DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        IntVector largest = IntVector.zero(I);
        for (long i = from; i < end; i += 4 * LANES * Lanes.uncountedOne) { // in address order (see Lanes)
            IntVector w = IntVector.fromMemorySegment(I, x, 2 * i, ORDER);
            IntVector m0 = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
            IntVector m1 = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
            IntVector m2 = m0.rearrange(SWAP_I);
            IntVector m3 = m1.rearrange(SWAP_I);
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
            largest = m0.max(m1).max(largest);
        }
        int top = largest.reduceLanes(VectorOperators.MAX);
        if (top >= PartialsPerStep.F16_INFINITY) {
            return top > PartialsPerStep.F16_INFINITY ? Double.NaN : Double.POSITIVE_INFINITY;
        }
        return inLaneOrder(a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7))).toArray()) * PartialsPerStep.F16_SCALE;
    }

    // Any inputs and outputs, a loop over each per step: the host's all-reduce of a small piece
    // among 3 or more replicas, and a kernel's output that is also one of its inputs (the host's
    // average of a longer piece into its first replica). A step of 2 * LANES elements reads every
    // input before it writes, and writes exactly its elements: the outputs may be inputs. The last
    // LANES where the count of steps is odd one element at a time.

    private static void anyCountF32(MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        DoubleVector kv = DoubleVector.broadcast(D, k);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / k);
        long end = from + steps * LANES;
        long i = from;
        for (; i + 2 * LANES <= end; i += 2 * LANES) {
            FloatVector x = FloatVector.fromMemorySegment(F, NATIVE.cast(in[0]), 4 * i, ORDER);
            DoubleVector lower = (DoubleVector) x.convertShape(VectorOperators.F2D, D, 0);
            DoubleVector upper = (DoubleVector) x.rearrange(SWAP_F).convertShape(VectorOperators.F2D, D, 0);
            for (int r = 1; r < in.length; r++) {
                FloatVector y = FloatVector.fromMemorySegment(F, NATIVE.cast(in[r]), 4 * i, ORDER);
                lower = lower.add((DoubleVector) y.convertShape(VectorOperators.F2D, D, 0));
                upper = upper.add((DoubleVector) y.rearrange(SWAP_F).convertShape(VectorOperators.F2D, D, 0));
            }
            FloatVector q = JOIN.selectFrom((FloatVector) divide(lower, kv, rv).convertShape(VectorOperators.D2F, F, 0),
                    (FloatVector) divide(upper, kv, rv).convertShape(VectorOperators.D2F, F, 0));
            for (MemorySegment m : out) {
                q.intoMemorySegment(NATIVE.cast(m), 4 * i, ORDER);
            }
        }
        meansInto(in, out, i, end, k);
    }

    // Two replicas and k = 2 (the common case), written out: the sum halved is exact. Into one
    // output (a kernel's), or into both inputs (the host's all-reduce).

    // A step of 2 * LANES floats where their float sum is finite (see finite); the rare step whose
    // sum is not, and the last LANES where the count of steps is odd, one element at a time (vector
    // code run that seldom is left to C1 by C2, and C1 runs the Vector API's Java: RESULTS).

    private static void twoFp32(MemorySegment a, MemorySegment b, MemorySegment out, long from, long steps) {
        a = NATIVE.cast(a);
        b = NATIVE.cast(b);
        out = NATIVE.cast(out);
        long end = from + steps * LANES;
        long i = from;
        for (; i + 2 * LANES <= end; i += 2 * LANES) {
            FloatVector sum = FloatVector.fromMemorySegment(F, a, 4 * i, ORDER).add(FloatVector.fromMemorySegment(F, b, 4 * i, ORDER));
            if (finite(sum)) {
                sum.mul(0.5f).intoMemorySegment(out, 4 * i, ORDER);
            } else {
                halfSums(a, b, out, out, i, i + 2 * LANES);
            }
        }
        halfSums(a, b, out, out, i, end);
    }

    private static void twoFp32IntoBoth(MemorySegment a, MemorySegment b, MemorySegment outA, MemorySegment outB, long from, long steps) {
        a = NATIVE.cast(a);
        b = NATIVE.cast(b);
        outA = NATIVE.cast(outA);
        outB = NATIVE.cast(outB);
        long end = from + steps * LANES;
        long i = from;
        for (; i + 2 * LANES <= end; i += 2 * LANES) {
            FloatVector sum = FloatVector.fromMemorySegment(F, a, 4 * i, ORDER).add(FloatVector.fromMemorySegment(F, b, 4 * i, ORDER));
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
            if (!allNative(m)) {
                meansInto(m, m, i, end, m.length);
            } else if (m.length == 2) {
                twoFp32IntoBoth(m[0], m[1], m[0], m[1], i, steps);
                halfSums(m[0], m[1], m[0], m[1], i + steps * LANES, end);
            } else if (m.length == 3) {
                meansInto(m, m, threeIntoAll(m[0], m[1], m[2], i, end), end, 3);
            } else {
                anyCountF32(m, m, i, steps, m.length);
                meansInto(m, m, i + steps * LANES, end, m.length);
            }
        }
    }

    /**
     * Three fp32 replicas' means into all three from {@code from}, whole steps of
     * {@code 2 * LANES} before {@code end}, as {@link #anyCountF32} does them; returns where they
     * stopped. Written with the Vector API alone: run once per short tensor, it is compiled after
     * helpers that other loops share (divide), which C2 may by then have compiled on their own and
     * no longer inline (every vector boxed: 2.5 times slower).
     */
    private static long threeIntoAll(MemorySegment a, MemorySegment b, MemorySegment c, long from, long end) {
        a = NATIVE.cast(a);
        b = NATIVE.cast(b);
        c = NATIVE.cast(c);
        DoubleVector kv = DoubleVector.broadcast(D, 3);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / 3);
        long i = from;
        for (; i + 2 * LANES <= end; i += 2 * LANES) {
            FloatVector x = FloatVector.fromMemorySegment(F, a, 4 * i, ORDER);
            FloatVector y = FloatVector.fromMemorySegment(F, b, 4 * i, ORDER);
            FloatVector z = FloatVector.fromMemorySegment(F, c, 4 * i, ORDER);
            DoubleVector lower = ((DoubleVector) x.convertShape(VectorOperators.F2D, D, 0))
                    .add((DoubleVector) y.convertShape(VectorOperators.F2D, D, 0))
                    .add((DoubleVector) z.convertShape(VectorOperators.F2D, D, 0));
            DoubleVector upper = ((DoubleVector) x.rearrange(SWAP_F).convertShape(VectorOperators.F2D, D, 0))
                    .add((DoubleVector) y.rearrange(SWAP_F).convertShape(VectorOperators.F2D, D, 0))
                    .add((DoubleVector) z.rearrange(SWAP_F).convertShape(VectorOperators.F2D, D, 0));
            // Quotients.divide: the corrected product, or the product where the remainder is zero or NaN
            DoubleVector pl = lower.mul(rv);
            DoubleVector rl = pl.neg().fma(kv, lower);
            DoubleVector ql = rl.fma(rv, pl).blend(pl, rl.compare(VectorOperators.EQ, 0).or(rl.compare(VectorOperators.NE, rl)));
            DoubleVector pu = upper.mul(rv);
            DoubleVector ru = pu.neg().fma(kv, upper);
            DoubleVector qu = ru.fma(rv, pu).blend(pu, ru.compare(VectorOperators.EQ, 0).or(ru.compare(VectorOperators.NE, ru)));
            FloatVector q = JOIN.selectFrom((FloatVector) ql.convertShape(VectorOperators.D2F, F, 0),
                    (FloatVector) qu.convertShape(VectorOperators.D2F, F, 0));
            q.intoMemorySegment(a, 4 * i, ORDER);
            q.intoMemorySegment(b, 4 * i, ORDER);
            q.intoMemorySegment(c, 4 * i, ORDER);
        }
        return i;
    }

    /**
     * Elements {@code [from, to)}: the mean of the fp32 inputs {@code in} as the kernels take it
     * ({@code k} the divisor), into every output (which may be inputs: an element's inputs are all
     * read before it is written).
     */
    private static void meansInto(MemorySegment[] in, MemorySegment[] out, long from, long to, float k) {
        double r = 1.0 / k;
        for (long i = from; i < to; i++) {
            double sum = in[0].getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i); // not 0 + ...: a sum of -0 stays -0
            for (int j = 1; j < in.length; j++) {
                sum += in[j].getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            }
            float q = (float) Quotients.divide(sum, k, r);
            for (MemorySegment s : out) {
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
     * count, each input read straight into the sum. A test on the count inside one loop had C2
     * recompile it at every new count until its vector helpers no longer inlined (too many nodes),
     * which boxed every vector and ran a tenth as fast; a loop over the inputs per step ran at 3/4
     * of this speed. A step stores its floats as the lower half of a whole vector, whose zeros the
     * next step writes over ({@link #store}); the last step one element at a time. An output that
     * shares memory with an input would read those zeros: it goes to {@link #anyCountF32}.
     */
    private static void fixedCount(MemorySegment[] in, MemorySegment out, long from, long steps, float divisor) {
        for (MemorySegment m : in) {
            if (out.asOverlappingSlice(m).isPresent()) {
                anyCountF32(in, new MemorySegment[] {out}, from, steps, divisor);
                return;
            }
        }
        if (steps == 0) {
            return;
        }
        DoubleVector kv = DoubleVector.broadcast(D, divisor);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / divisor);
        // an int count of steps, not a long index against a long end: over a long index C2 hoisted a
        // profiled check out of the loops of 6 to 8 inputs whose trap then fired launch after
        // launch, each trap a recompilation (a tenth of the speed and less: bench/RESULTS.md, session 26)
        int count = Math.toIntExact(steps) - 1;
        long last = from + (long) count * LANES;
        switch (in.length) { // a method per count: C2 compiles each loop apart
            case 2 -> two(in, out, from, count, kv, rv);
            case 3 -> three(in, out, from, count, kv, rv);
            case 4 -> four(in, out, from, count, kv, rv);
            case 5 -> five(in, out, from, count, kv, rv);
            case 6 -> six(in, out, from, count, kv, rv);
            case 7 -> seven(in, out, from, count, kv, rv);
            default -> eight(in, out, from, count, kv, rv);
        }
        meansInto(in, new MemorySegment[] {out}, last, last + LANES, divisor);
    }

    private static void two(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = NATIVE.cast(in[0]), b = NATIVE.cast(in[1]);
        out = NATIVE.cast(out);
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)), kv, rv), out, i);
        }
    }

    private static void three(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = NATIVE.cast(in[0]), b = NATIVE.cast(in[1]), c = NATIVE.cast(in[2]);
        out = NATIVE.cast(out);
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)), kv, rv), out, i);
        }
    }

    private static void four(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = NATIVE.cast(in[0]), b = NATIVE.cast(in[1]), c = NATIVE.cast(in[2]), d = NATIVE.cast(in[3]);
        out = NATIVE.cast(out);
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)), kv, rv), out, i);
        }
    }

    private static void five(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = NATIVE.cast(in[0]), b = NATIVE.cast(in[1]), c = NATIVE.cast(in[2]), d = NATIVE.cast(in[3]), e = NATIVE.cast(in[4]);
        out = NATIVE.cast(out);
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)), kv, rv), out, i);
        }
    }

    private static void six(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = NATIVE.cast(in[0]), b = NATIVE.cast(in[1]), c = NATIVE.cast(in[2]), d = NATIVE.cast(in[3]), e = NATIVE.cast(in[4]), f = NATIVE.cast(in[5]);
        out = NATIVE.cast(out);
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            store(divide(f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)).add(f64(f, i)), kv, rv), out, i);
        }
    }

    private static void seven(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = NATIVE.cast(in[0]), b = NATIVE.cast(in[1]), c = NATIVE.cast(in[2]), d = NATIVE.cast(in[3]), e = NATIVE.cast(in[4]), f = NATIVE.cast(in[5]), g = NATIVE.cast(in[6]);
        out = NATIVE.cast(out);
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            DoubleVector sum = f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)).add(f64(f, i)).add(f64(g, i));
            store(divide(sum, kv, rv), out, i);
        }
    }

    private static void eight(MemorySegment[] in, MemorySegment out, long from, int steps, DoubleVector kv, DoubleVector rv) {
        MemorySegment a = NATIVE.cast(in[0]), b = NATIVE.cast(in[1]), c = NATIVE.cast(in[2]), d = NATIVE.cast(in[3]), e = NATIVE.cast(in[4]), f = NATIVE.cast(in[5]), g = NATIVE.cast(in[6]), h = NATIVE.cast(in[7]);
        out = NATIVE.cast(out);
        for (int step = 0; step < steps; step++) {
            long i = from + (long) step * LANES;
            DoubleVector sum = f64(a, i).add(f64(b, i)).add(f64(c, i)).add(f64(d, i)).add(f64(e, i)).add(f64(f, i)).add(f64(g, i))
                    .add(f64(h, i));
            store(divide(sum, kv, rv), out, i);
        }
    }

    /** fp32 elements {@code [i, i + LANES)} as float64: the lower half of the float vector at {@code i}, which must lie in {@code m}. */
    private static DoubleVector f64(MemorySegment m, long i) {
        return (DoubleVector) FloatVector.fromMemorySegment(F, m, 4 * i, ORDER).convertShape(VectorOperators.F2D, D, 0);
    }

    /**
     * {@code q} rounded to fp32 into elements {@code [i, i + LANES)}, and zeros into the next
     * {@code LANES}: the lower half of a float vector, stored whole (a masked store ran at half the
     * speed; joining two steps' halves, as {@link #anyCountF32} does, doubles the code of the loops
     * of many inputs).
     */
    private static void store(DoubleVector q, MemorySegment out, long i) {
        ((FloatVector) q.convertShape(VectorOperators.D2F, F, 0)).intoMemorySegment(out, 4 * i, ORDER);
    }

    /** {@link Quotients#divide}, lane by lane: the corrected product, or the product where the remainder is zero or NaN. */
    private static DoubleVector divide(DoubleVector sum, DoubleVector k, DoubleVector r) {
        DoubleVector q = sum.mul(r);
        DoubleVector remainder = q.neg().fma(k, sum);
        DoubleVector corrected = remainder.fma(r, q);
        VectorMask<Double> product = remainder.compare(VectorOperators.EQ, 0).or(remainder.compare(VectorOperators.NE, remainder));
        return corrected.blend(q, product);
    }
}
