package io.gradsync.tasks.kernels.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.function.LongToDoubleFunction;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The partials kernels a step of slots at a time: slot {@code p} of {@code P} sums elements
 * {@code p, p + P, ...}; a step's running sums stay in registers over all its rows, which it reads
 * at once. Right for arrays of few rows; taller ones go to {@link PartialsPerSum}, whose sums are
 * the same. Each step is written out with the Vector API alone ({@link LaneKernels} says why). A
 * 16-bit step reads each of its rows as a whole word vector and uses its lower half, the next
 * step's slots in the upper: those vectors must lie within the array ({@link Lanes} stops the steps
 * before one would not).
 *
 * <p>Thread-safety: stateless.
 */
final class PartialsPerStep {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = D.length();
    // whole vectors of the float64 lanes' shape, of which a step uses the lower half (LaneKernels says why)
    private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, D.vectorShape());
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, D.vectorShape());
    private static final VectorSpecies<Long> L = VectorSpecies.of(long.class, D.vectorShape());
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    /** fp16 magnitudes shifted into floats are the values times 2^-112: their squares' sums times this are the kernels'. */
    static final double F16_SCALE = 0x1p224;
    /**
     * An fp16 infinity's magnitude bits where the lanes shift them to make a float of them: a
     * magnitude at or above it is an infinity or NaN (above it, a NaN).
     */
    static final int F16_INFINITY = 0x7C00 << 13;
    /**
     * A sum of fp16 squares (scaled back) from which it may hold an infinity or NaN: an infinity's
     * square, 2^32. The shift maps an infinity or NaN to a finite float of at least an infinity's
     * magnitude, and a sum of squares rounded to nearest is at least each of its squares. The
     * steps of fewer than 32 rows check their sums so, sparing their loops a running maximum of
     * every magnitude: finite halves reach it there only from magnitudes above 11,000, near
     * fp16's end, and are then done again by the kernel's own sum. Longer sums (the tall partials,
     * the plain sum) keep the running maximum: a loss-scaled gradient's sums pass 2^32.
     */
    static final double F16_SUSPECT = 0x1p32;
    /** The word lanes a 16-bit step uses: the lower half (a word vector holds two steps' slots). */
    static final VectorMask<Integer> LOWER = VectorMask.fromLong(I, (1L << LANES) - 1);
    /**
     * Lane picks that interleave a step's even slots {@code e} and odd slots {@code o} back into slot
     * order ({@code selectFrom(e, o)} on their bits): the first half of the lanes, then the second.
     * Integral picks: floating-point ones are converted and checked at every pick.
     */
    static final long[] ZIP_FIRST = zip(0);
    static final long[] ZIP_SECOND = zip(LANES / 2);

    private PartialsPerStep() {
    }

    private static long[] zip(int from) {
        long[] picks = new long[LANES];
        for (int j = 0; j < LANES; j++) {
            picks[j] = (j % 2 == 0 ? 0 : LANES) + from + j / 2;
        }
        return picks;
    }

    /**
     * See {@link Lanes#squaresPartialsF32}: a step of {@code 2 * LANES} slots reads each row as one
     * float vector, whose lower half goes into the sums {@code a}, its upper half (moved down) into
     * {@code b}; rows four at a time, as {@link #squaresPartialsBf16}.
     */
    static void squaresPartialsF32(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        long end = from + steps * 2 * LANES;
        for (long k = from; k < end; k += 2 * LANES) {
            DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            DoubleVector b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
            long e = k;
            for (int half = 2 * (count / 8); half > 0; half--) {
                FloatVector w0 = FloatVector.fromMemorySegment(F, x, 4 * e, ORDER);
                FloatVector w1 = FloatVector.fromMemorySegment(F, x, 4 * (e + slots), ORDER);
                FloatVector w2 = FloatVector.fromMemorySegment(F, x, 4 * (e + 2 * slots), ORDER);
                FloatVector w3 = FloatVector.fromMemorySegment(F, x, 4 * (e + 3 * slots), ORDER);
                DoubleVector u0 = (DoubleVector) w0.convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u1 = (DoubleVector) w1.convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u2 = (DoubleVector) w2.convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u3 = (DoubleVector) w3.convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v0 = (DoubleVector) w0.rearrange(LaneKernels.SWAP_F).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v1 = (DoubleVector) w1.rearrange(LaneKernels.SWAP_F).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v2 = (DoubleVector) w2.rearrange(LaneKernels.SWAP_F).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v3 = (DoubleVector) w3.rearrange(LaneKernels.SWAP_F).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector t0 = u0.fma(u0, a0), t1 = u1.fma(u1, a1), t2 = u2.fma(u2, a2), t3 = u3.fma(u3, a3);
                DoubleVector c0 = v0.fma(v0, b0), c1 = v1.fma(v1, b1), c2 = v2.fma(v2, b2), c3 = v3.fma(v3, b3);
                a0 = a4; a1 = a5; a2 = a6; a3 = a7;
                a4 = t0; a5 = t1; a6 = t2; a7 = t3;
                b0 = b4; b1 = b5; b2 = b6; b3 = b7;
                b4 = c0; b5 = c1; b6 = c2; b7 = c3;
                e += 4 * slots;
            }
            for (int r = count % 8; r > 0; r--) {
                FloatVector w = FloatVector.fromMemorySegment(F, x, 4 * e, ORDER);
                DoubleVector u = (DoubleVector) w.convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v = (DoubleVector) w.rearrange(LaneKernels.SWAP_F).convertShape(VectorOperators.F2D, D, 0);
                a0 = u.fma(u, a0);
                b0 = v.fma(v, b0);
                e += slots;
            }
            a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7))).intoMemorySegment(partials, 8 * k, ORDER);
            b0.add(b1).add(b2.add(b3)).add(b4.add(b5).add(b6.add(b7))).intoMemorySegment(partials, 8 * (k + LANES), ORDER);
        }
    }

    /**
     * See {@link Lanes#squaresPartialsBf16}. Written out with the Vector API alone, as
     * {@code squaresBf16} is: a loop calling a helper of its own for its loads lost C2's intrinsics
     * after other kernels had run (bench/RESULTS.md).
     */
    static void squaresPartialsBf16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        LongVector first = LongVector.fromArray(L, ZIP_FIRST, 0);
        LongVector second = LongVector.fromArray(L, ZIP_SECOND, 0);
        long end = from + steps * 2 * LANES;
        for (long k = from; k < end; k += 2 * LANES) {
            DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            DoubleVector b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
            long e = k;
            // four rows at a time, the sets of four sums trading places (as squaresPartialsF16)
            for (int half = 2 * (count / 8); half > 0; half--) {
                IntVector w0 = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector w1 = IntVector.fromMemorySegment(I, x, 2 * (e + slots), ORDER);
                IntVector w2 = IntVector.fromMemorySegment(I, x, 2 * (e + 2 * slots), ORDER);
                IntVector w3 = IntVector.fromMemorySegment(I, x, 2 * (e + 3 * slots), ORDER);
                DoubleVector u0 = (DoubleVector) w0.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u1 = (DoubleVector) w1.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u2 = (DoubleVector) w2.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u3 = (DoubleVector) w3.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v0 = (DoubleVector) w0.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v1 = (DoubleVector) w1.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v2 = (DoubleVector) w2.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v3 = (DoubleVector) w3.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector t0 = u0.fma(u0, a0), t1 = u1.fma(u1, a1), t2 = u2.fma(u2, a2), t3 = u3.fma(u3, a3);
                DoubleVector c0 = v0.fma(v0, b0), c1 = v1.fma(v1, b1), c2 = v2.fma(v2, b2), c3 = v3.fma(v3, b3);
                a0 = a4; a1 = a5; a2 = a6; a3 = a7;
                a4 = t0; a5 = t1; a6 = t2; a7 = t3;
                b0 = b4; b1 = b5; b2 = b6; b3 = b7;
                b4 = c0; b5 = c1; b6 = c2; b7 = c3;
                e += 4 * slots;
            }
            for (int r = count % 8; r > 0; r--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                DoubleVector u = (DoubleVector) w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v = (DoubleVector) w.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                a0 = u.fma(u, a0);
                b0 = v.fma(v, b0);
                e += slots;
            }
            DoubleVector e0 = a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7)));
            DoubleVector o0 = b0.add(b1).add(b2.add(b3)).add(b4.add(b5).add(b6.add(b7)));
            // a word's low element is the even slot's: the two interleaved back into slot order
            first.selectFrom(e0.reinterpretAsLongs(), o0.reinterpretAsLongs()).intoMemorySegment(partials, 8 * k, ORDER);
            second.selectFrom(e0.reinterpretAsLongs(), o0.reinterpretAsLongs()).intoMemorySegment(partials, 8 * (k + LANES), ORDER);
        }
    }

    /**
     * See {@link Lanes#squaresPartialsF16}: fp16 magnitudes shifted into floats (the values times
     * 2^-112, their squares' sums the kernels' times 2^-224 exactly, scaled back at the end); a
     * slot whose sum may hold an infinity or NaN ({@link #F16_SUSPECT}) is done again by {@code slot}.
     */
    static void squaresPartialsF16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials,
            LongToDoubleFunction slot) {
        LongVector first = LongVector.fromArray(L, ZIP_FIRST, 0);
        LongVector second = LongVector.fromArray(L, ZIP_SECOND, 0);
        long end = from + steps * 2 * LANES;
        for (long k = from; k < end; k += 2 * LANES) {
            DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            DoubleVector b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
            long e = k;
            // a group's rows four at a time: rows 0-3 into the first four sums, then the two sets of
            // four trade places, so that rows 4-7 go to the last four (half the code of eight rows
            // a pass, which C2 compiled to a tenth of the speed once other kernels had run)
            for (int half = 2 * (count / 8); half > 0; half--) {
                IntVector w0 = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector w1 = IntVector.fromMemorySegment(I, x, 2 * (e + slots), ORDER);
                IntVector w2 = IntVector.fromMemorySegment(I, x, 2 * (e + 2 * slots), ORDER);
                IntVector w3 = IntVector.fromMemorySegment(I, x, 2 * (e + 3 * slots), ORDER);
                IntVector l0 = w0.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h0 = w0.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l1 = w1.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h1 = w1.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l2 = w2.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h2 = w2.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l3 = w3.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h3 = w3.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                DoubleVector u0 = (DoubleVector) l0.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u1 = (DoubleVector) l1.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u2 = (DoubleVector) l2.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u3 = (DoubleVector) l3.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v0 = (DoubleVector) h0.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v1 = (DoubleVector) h1.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v2 = (DoubleVector) h2.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v3 = (DoubleVector) h3.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector t0 = u0.fma(u0, a0), t1 = u1.fma(u1, a1), t2 = u2.fma(u2, a2), t3 = u3.fma(u3, a3);
                DoubleVector c0 = v0.fma(v0, b0), c1 = v1.fma(v1, b1), c2 = v2.fma(v2, b2), c3 = v3.fma(v3, b3);
                a0 = a4; a1 = a5; a2 = a6; a3 = a7;
                a4 = t0; a5 = t1; a6 = t2; a7 = t3;
                b0 = b4; b1 = b5; b2 = b6; b3 = b7;
                b4 = c0; b5 = c1; b6 = c2; b7 = c3;
                e += 4 * slots;
            }
            for (int r = count % 8; r > 0; r--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector l = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                DoubleVector u = (DoubleVector) l.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v = (DoubleVector) h.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                a0 = u.fma(u, a0);
                b0 = v.fma(v, b0);
                e += slots;
            }
            DoubleVector e0 = a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7))).mul(F16_SCALE);
            DoubleVector o0 = b0.add(b1).add(b2.add(b3)).add(b4.add(b5).add(b6.add(b7))).mul(F16_SCALE);
            first.selectFrom(e0.reinterpretAsLongs(), o0.reinterpretAsLongs()).intoMemorySegment(partials, 8 * k, ORDER);
            second.selectFrom(e0.reinterpretAsLongs(), o0.reinterpretAsLongs()).intoMemorySegment(partials, 8 * (k + LANES), ORDER);
            if (e0.compare(VectorOperators.GE, F16_SUSPECT).or(o0.compare(VectorOperators.GE, F16_SUSPECT)).anyTrue()) {
                redoSuspects(partials, k, 2 * LANES, slot);
            }
        }
    }

    /**
     * Slots {@code [k, k + width)} of {@code partials} ({@code width} a multiple of the lanes) whose
     * fp16 sums reach {@link #F16_SUSPECT} set to {@code slot.applyAsDouble(p)}, the kernel's own sum.
     */
    static void redoSuspects(MemorySegment partials, long k, int width, LongToDoubleFunction slot) {
        for (long q = k; q < k + width; q += LANES) {
            long suspects = DoubleVector.fromMemorySegment(D, partials, 8 * q, ORDER).compare(VectorOperators.GE, F16_SUSPECT).toLong();
            for (; suspects != 0; suspects &= suspects - 1) {
                long p = q + Long.numberOfTrailingZeros(suspects);
                partials.setAtIndex(ValueLayout.JAVA_DOUBLE, p, slot.applyAsDouble(p));
            }
        }
    }

    /** See {@link Lanes#sumsPartialsF64}. */
    static void sumsPartialsF64(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        long end = from + steps * LANES;
        for (long k = from; k < end; k += LANES) {
            DoubleVector acc = DoubleVector.zero(D);
            long e = k;
            for (int r = count; r > 0; r--) {
                acc = acc.add(DoubleVector.fromMemorySegment(D, x, 8 * e, ORDER));
                e += slots;
            }
            acc.intoMemorySegment(partials, 8 * k, ORDER);
        }
    }
}
