package io.gradsync.tasks.kernels.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The partials kernels in SIMD lanes ({@code sumOfSquaresPartials}, {@code ..Bf16}, {@code ..F16}
 * and {@code sumPartials}): slot {@code p} of {@code P} sums elements {@code p, p + P, ...}, so a
 * step of slots reads one short piece of every row, and the rows lie {@code P} elements apart. A
 * step keeps its running sums in registers over {@value #ROWS_AT_ONCE} rows at most. Past that the
 * rows are taken in chunks of {@value #ROWS_AT_ONCE}, a block of {@value #BLOCK} slots at a time,
 * each step's sums carried from one chunk to the next in an array the size of the first-level
 * cache: a step over every row of a tall array touches a page per row, more pages than the
 * first-level TLB holds, and runs at a third of the speed (bench/RESULTS.md). The sums are the
 * kernels' either way: element {@code j} of a slot into running sum {@code j mod 8} while whole
 * groups of eight remain, the rest into sum 0, the eight added
 * {@code ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))}, each step one {@code fma} a slot.
 *
 * <p>Each kind's step is written out with the Vector API alone, no helper shared between them: a
 * loop calling a vector helper that another loop also calls lost C2's intrinsics after other
 * kernels had run ({@link LaneKernels}).
 *
 * <p>Thread-safety: stateless; each call's carry array is its own.
 */
final class LanePartials {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = D.length();
    private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, VectorShape.forBitSize(32 * LANES));
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, VectorShape.forBitSize(32 * LANES));
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    /** Rows a step sums in registers before its sums go to the carry array: a multiple of 8. */
    static final int ROWS_AT_ONCE = 32;
    /** Slots whose sums are carried at once: 32 KiB of sums for the 16-bit kinds. */
    static final int BLOCK = 512;
    /** fp16 magnitudes shifted into a float's exponent and fraction are the value times 2^-112; their squares, 2^-224. */
    private static final double F16_SQUARES_SCALE = 0x1p224;
    /** An fp16 infinity's magnitude bits in that position. */
    private static final int F16_INFINITY = 0x7C00 << 13;

    /** The partials kernels this class runs. */
    enum Kind {
        /** {@code sumOfSquaresPartials}: fp32 elements, a step of {@code LANES} slots. */
        SQUARES_F32(1, 8),
        /** {@code sumOfSquaresPartialsBf16}: a step of {@code 2 * LANES} slots (a word's two halves). */
        SQUARES_BF16(2, 8),
        /** {@code sumOfSquaresPartialsF16}: as bf16, with each slot's largest magnitude beside its sums (NaN and infinity). */
        SQUARES_F16(2, 9),
        /** {@code sumPartials}: fp64 elements added in order, one sum a slot. */
        SUMS_F64(1, 1);

        /** Slots a step, in {@code LANES}. */
        final int width;
        /** Carried doubles a slot. */
        final int carried;

        Kind(int width, int carried) {
            this.width = width;
            this.carried = carried;
        }
    }

    private LanePartials() {
    }

    /** Slots a step of {@code kind}. */
    static int step(Kind kind) {
        return kind.width * LANES;
    }

    /**
     * Slots {@code [from, from + steps * step(kind))} of {@code slots}, each with {@code count}
     * elements {@code p, p + slots, ...} in {@code x}, into {@code partials} (fp64, slot order).
     */
    static void run(Kind kind, MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        int step = step(kind);
        long end = from + steps * step;
        int groups = count / 8;
        double[] tmp = new double[4 * LANES];
        if (count <= ROWS_AT_ONCE) {
            steps(kind, x, slots, from, end, 0, groups, count % 8, null, 0, true, true, partials, tmp);
            return;
        }
        double[] acc = new double[BLOCK * kind.carried];
        int chunkGroups = ROWS_AT_ONCE / 8;
        for (long block = from; block < end; block += BLOCK) {
            long blockEnd = Math.min(end, block + BLOCK);
            for (int g0 = 0; g0 < groups; g0 += chunkGroups) {
                int g1 = Math.min(groups, g0 + chunkGroups);
                boolean last = g1 == groups;
                for (long k = block; k < blockEnd; k += step) {
                    steps(kind, x, slots, k, k + step, 8L * g0, g1 - g0, last ? count % 8 : 0, acc, (int) (k - block) * kind.carried,
                            g0 == 0, last, partials, tmp);
                }
            }
        }
    }

    /** The steps of slots {@code [from, end)}, from row {@code row}: {@code groups} groups of eight rows, then {@code rest} rows. */
    private static void steps(Kind kind, MemorySegment x, long slots, long from, long end, long row, int groups, int rest, double[] acc,
            int carry, boolean first, boolean last, MemorySegment partials, double[] tmp) {
        switch (kind) {
            case SQUARES_F32 -> squaresF32(x, slots, from, end, row, groups, rest, acc, carry, first, last, partials, tmp);
            case SQUARES_BF16 -> squaresBf16(x, slots, from, end, row, groups, rest, acc, carry, first, last, partials, tmp);
            case SQUARES_F16 -> squaresF16(x, slots, from, end, row, groups, rest, acc, carry, first, last, partials, tmp);
            case SUMS_F64 -> sumsF64(x, slots, from, end, row, groups * 8 + rest, acc, carry, first, last, partials);
        }
    }

    /**
     * One step of {@code sumOfSquaresPartials}: slots {@code [k, k + LANES)}, {@code groups} groups of
     * eight rows from element {@code e} then {@code rest} rows into sum 0; the sums start at 0 ({@code first})
     * or from {@code acc[o ..]}, and end in {@code partials} ({@code last}) or back in {@code acc}.
     */
    private static void squaresF32(MemorySegment x, long slots, long from, long end, long row, int groups, int rest, double[] acc, int carry,
            boolean first, boolean last, MemorySegment partials, double[] tmp) {
        DoubleVector zero = DoubleVector.zero(D);
        for (long k = from; k < end; k += LANES) {
            int o = carry + (int) (k - from) * 8;
            long e = k + row * slots;
            DoubleVector s0 = first ? zero : DoubleVector.fromArray(D, acc, o);
            DoubleVector s1 = first ? zero : DoubleVector.fromArray(D, acc, o + LANES);
            DoubleVector s2 = first ? zero : DoubleVector.fromArray(D, acc, o + 2 * LANES);
            DoubleVector s3 = first ? zero : DoubleVector.fromArray(D, acc, o + 3 * LANES);
            DoubleVector s4 = first ? zero : DoubleVector.fromArray(D, acc, o + 4 * LANES);
            DoubleVector s5 = first ? zero : DoubleVector.fromArray(D, acc, o + 5 * LANES);
            DoubleVector s6 = first ? zero : DoubleVector.fromArray(D, acc, o + 6 * LANES);
            DoubleVector s7 = first ? zero : DoubleVector.fromArray(D, acc, o + 7 * LANES);
            for (int g = groups; g > 0; g--) {
                DoubleVector v0 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * e, ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v1 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * (e + slots), ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v2 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * (e + 2 * slots), ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v3 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * (e + 3 * slots), ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v4 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * (e + 4 * slots), ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v5 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * (e + 5 * slots), ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v6 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * (e + 6 * slots), ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v7 = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * (e + 7 * slots), ORDER).convertShape(VectorOperators.F2D, D, 0);
                s0 = v0.fma(v0, s0);
                s1 = v1.fma(v1, s1);
                s2 = v2.fma(v2, s2);
                s3 = v3.fma(v3, s3);
                s4 = v4.fma(v4, s4);
                s5 = v5.fma(v5, s5);
                s6 = v6.fma(v6, s6);
                s7 = v7.fma(v7, s7);
                e += 8 * slots;
            }
            for (int r = rest; r > 0; r--) {
                DoubleVector v = (DoubleVector) FloatVector.fromMemorySegment(F, x, 4 * e, ORDER).convertShape(VectorOperators.F2D, D, 0);
                s0 = v.fma(v, s0);
                e += slots;
            }
            if (last) {
                s0.add(s1).add(s2.add(s3)).add(s4.add(s5).add(s6.add(s7))).intoMemorySegment(partials, 8 * k, ORDER);
                continue;
            }
            s0.intoArray(acc, o);
            s1.intoArray(acc, o + LANES);
            s2.intoArray(acc, o + 2 * LANES);
            s3.intoArray(acc, o + 3 * LANES);
            s4.intoArray(acc, o + 4 * LANES);
            s5.intoArray(acc, o + 5 * LANES);
            s6.intoArray(acc, o + 6 * LANES);
            s7.intoArray(acc, o + 7 * LANES);
        }
    }

    /**
     * As {@link #squaresF32} for bf16: slots {@code [k, k + 2 * LANES)}, a 32-bit word's low half the even
     * slot's element ({@code a} sums), its high half the odd slot's ({@code b} sums).
     */
    private static void squaresBf16(MemorySegment x, long slots, long from, long end, long row, int groups, int rest, double[] acc, int carry,
            boolean first, boolean last, MemorySegment partials, double[] tmp) {
        DoubleVector zero = DoubleVector.zero(D);
        for (long k = from; k < end; k += 2 * LANES) {
            int o = carry + (int) (k - from) * 8;
            long e = k + row * slots;
            DoubleVector a0 = first ? zero : DoubleVector.fromArray(D, acc, o);
            DoubleVector a1 = first ? zero : DoubleVector.fromArray(D, acc, o + LANES);
            DoubleVector a2 = first ? zero : DoubleVector.fromArray(D, acc, o + 2 * LANES);
            DoubleVector a3 = first ? zero : DoubleVector.fromArray(D, acc, o + 3 * LANES);
            DoubleVector a4 = first ? zero : DoubleVector.fromArray(D, acc, o + 4 * LANES);
            DoubleVector a5 = first ? zero : DoubleVector.fromArray(D, acc, o + 5 * LANES);
            DoubleVector a6 = first ? zero : DoubleVector.fromArray(D, acc, o + 6 * LANES);
            DoubleVector a7 = first ? zero : DoubleVector.fromArray(D, acc, o + 7 * LANES);
            DoubleVector b0 = first ? zero : DoubleVector.fromArray(D, acc, o + 8 * LANES);
            DoubleVector b1 = first ? zero : DoubleVector.fromArray(D, acc, o + 9 * LANES);
            DoubleVector b2 = first ? zero : DoubleVector.fromArray(D, acc, o + 10 * LANES);
            DoubleVector b3 = first ? zero : DoubleVector.fromArray(D, acc, o + 11 * LANES);
            DoubleVector b4 = first ? zero : DoubleVector.fromArray(D, acc, o + 12 * LANES);
            DoubleVector b5 = first ? zero : DoubleVector.fromArray(D, acc, o + 13 * LANES);
            DoubleVector b6 = first ? zero : DoubleVector.fromArray(D, acc, o + 14 * LANES);
            DoubleVector b7 = first ? zero : DoubleVector.fromArray(D, acc, o + 15 * LANES);
            for (int g = groups; g > 0; g--) {
                IntVector w0 = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector w1 = IntVector.fromMemorySegment(I, x, 2 * (e + slots), ORDER);
                IntVector w2 = IntVector.fromMemorySegment(I, x, 2 * (e + 2 * slots), ORDER);
                IntVector w3 = IntVector.fromMemorySegment(I, x, 2 * (e + 3 * slots), ORDER);
                IntVector w4 = IntVector.fromMemorySegment(I, x, 2 * (e + 4 * slots), ORDER);
                IntVector w5 = IntVector.fromMemorySegment(I, x, 2 * (e + 5 * slots), ORDER);
                IntVector w6 = IntVector.fromMemorySegment(I, x, 2 * (e + 6 * slots), ORDER);
                IntVector w7 = IntVector.fromMemorySegment(I, x, 2 * (e + 7 * slots), ORDER);
                DoubleVector u0 = (DoubleVector) w0.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v0 = (DoubleVector) w0.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u1 = (DoubleVector) w1.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v1 = (DoubleVector) w1.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u2 = (DoubleVector) w2.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v2 = (DoubleVector) w2.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u3 = (DoubleVector) w3.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v3 = (DoubleVector) w3.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u4 = (DoubleVector) w4.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v4 = (DoubleVector) w4.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u5 = (DoubleVector) w5.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v5 = (DoubleVector) w5.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u6 = (DoubleVector) w6.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v6 = (DoubleVector) w6.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u7 = (DoubleVector) w7.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v7 = (DoubleVector) w7.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                a0 = u0.fma(u0, a0);
                b0 = v0.fma(v0, b0);
                a1 = u1.fma(u1, a1);
                b1 = v1.fma(v1, b1);
                a2 = u2.fma(u2, a2);
                b2 = v2.fma(v2, b2);
                a3 = u3.fma(u3, a3);
                b3 = v3.fma(v3, b3);
                a4 = u4.fma(u4, a4);
                b4 = v4.fma(v4, b4);
                a5 = u5.fma(u5, a5);
                b5 = v5.fma(v5, b5);
                a6 = u6.fma(u6, a6);
                b6 = v6.fma(v6, b6);
                a7 = u7.fma(u7, a7);
                b7 = v7.fma(v7, b7);
                e += 8 * slots;
            }
            for (int r = rest; r > 0; r--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                DoubleVector u = (DoubleVector) w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v = (DoubleVector) w.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                a0 = u.fma(u, a0);
                b0 = v.fma(v, b0);
                e += slots;
            }
            if (last) {
                DoubleVector even = a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7)));
                DoubleVector odd = b0.add(b1).add(b2.add(b3)).add(b4.add(b5).add(b6.add(b7)));
                even.intoArray(tmp, 0);
                odd.intoArray(tmp, LANES);
                write(tmp, k, partials);
                continue;
            }
            a0.intoArray(acc, o);
            a1.intoArray(acc, o + LANES);
            a2.intoArray(acc, o + 2 * LANES);
            a3.intoArray(acc, o + 3 * LANES);
            a4.intoArray(acc, o + 4 * LANES);
            a5.intoArray(acc, o + 5 * LANES);
            a6.intoArray(acc, o + 6 * LANES);
            a7.intoArray(acc, o + 7 * LANES);
            b0.intoArray(acc, o + 8 * LANES);
            b1.intoArray(acc, o + 9 * LANES);
            b2.intoArray(acc, o + 10 * LANES);
            b3.intoArray(acc, o + 11 * LANES);
            b4.intoArray(acc, o + 12 * LANES);
            b5.intoArray(acc, o + 13 * LANES);
            b6.intoArray(acc, o + 14 * LANES);
            b7.intoArray(acc, o + 15 * LANES);
        }
    }

    /**
     * As {@link #squaresBf16} for fp16. A half's magnitude shifted into a float's exponent and fraction
     * is the value times 2^-112 (subnormals too), so the lanes sum the squares times 2^-224, scaled back
     * at the end: the same bits, since scaling by a power of two that stays clear of the float64 range's
     * ends commutes with every rounding. Infinity and NaN map to finite values there: the largest
     * magnitude each slot saw ({@code ma}, {@code mb}, carried as doubles) gives them as the kernel does.
     */
    private static void squaresF16(MemorySegment x, long slots, long from, long end, long row, int groups, int rest, double[] acc, int carry,
            boolean first, boolean last, MemorySegment partials, double[] tmp) {
        DoubleVector zero = DoubleVector.zero(D);
        for (long k = from; k < end; k += 2 * LANES) {
            int o = carry + (int) (k - from) * 9;
            long e = k + row * slots;
            DoubleVector a0 = first ? zero : DoubleVector.fromArray(D, acc, o);
            DoubleVector a1 = first ? zero : DoubleVector.fromArray(D, acc, o + LANES);
            DoubleVector a2 = first ? zero : DoubleVector.fromArray(D, acc, o + 2 * LANES);
            DoubleVector a3 = first ? zero : DoubleVector.fromArray(D, acc, o + 3 * LANES);
            DoubleVector a4 = first ? zero : DoubleVector.fromArray(D, acc, o + 4 * LANES);
            DoubleVector a5 = first ? zero : DoubleVector.fromArray(D, acc, o + 5 * LANES);
            DoubleVector a6 = first ? zero : DoubleVector.fromArray(D, acc, o + 6 * LANES);
            DoubleVector a7 = first ? zero : DoubleVector.fromArray(D, acc, o + 7 * LANES);
            DoubleVector b0 = first ? zero : DoubleVector.fromArray(D, acc, o + 8 * LANES);
            DoubleVector b1 = first ? zero : DoubleVector.fromArray(D, acc, o + 9 * LANES);
            DoubleVector b2 = first ? zero : DoubleVector.fromArray(D, acc, o + 10 * LANES);
            DoubleVector b3 = first ? zero : DoubleVector.fromArray(D, acc, o + 11 * LANES);
            DoubleVector b4 = first ? zero : DoubleVector.fromArray(D, acc, o + 12 * LANES);
            DoubleVector b5 = first ? zero : DoubleVector.fromArray(D, acc, o + 13 * LANES);
            DoubleVector b6 = first ? zero : DoubleVector.fromArray(D, acc, o + 14 * LANES);
            DoubleVector b7 = first ? zero : DoubleVector.fromArray(D, acc, o + 15 * LANES);
            IntVector ma = first ? IntVector.zero(I) : (IntVector) DoubleVector.fromArray(D, acc, o + 16 * LANES).convertShape(VectorOperators.D2I, I, 0);
            IntVector mb = first ? IntVector.zero(I) : (IntVector) DoubleVector.fromArray(D, acc, o + 17 * LANES).convertShape(VectorOperators.D2I, I, 0);
            for (int g = groups; g > 0; g--) {
                IntVector w0 = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector w1 = IntVector.fromMemorySegment(I, x, 2 * (e + slots), ORDER);
                IntVector w2 = IntVector.fromMemorySegment(I, x, 2 * (e + 2 * slots), ORDER);
                IntVector w3 = IntVector.fromMemorySegment(I, x, 2 * (e + 3 * slots), ORDER);
                IntVector w4 = IntVector.fromMemorySegment(I, x, 2 * (e + 4 * slots), ORDER);
                IntVector w5 = IntVector.fromMemorySegment(I, x, 2 * (e + 5 * slots), ORDER);
                IntVector w6 = IntVector.fromMemorySegment(I, x, 2 * (e + 6 * slots), ORDER);
                IntVector w7 = IntVector.fromMemorySegment(I, x, 2 * (e + 7 * slots), ORDER);
                IntVector l0 = w0.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h0 = w0.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l1 = w1.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h1 = w1.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l2 = w2.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h2 = w2.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l3 = w3.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h3 = w3.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l4 = w4.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h4 = w4.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l5 = w5.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h5 = w5.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l6 = w6.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h6 = w6.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector l7 = w7.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h7 = w7.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                ma = ma.max(l0.max(l1).max(l2.max(l3)).max(l4.max(l5).max(l6.max(l7))));
                mb = mb.max(h0.max(h1).max(h2.max(h3)).max(h4.max(h5).max(h6.max(h7))));
                DoubleVector u0 = (DoubleVector) l0.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v0 = (DoubleVector) h0.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u1 = (DoubleVector) l1.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v1 = (DoubleVector) h1.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u2 = (DoubleVector) l2.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v2 = (DoubleVector) h2.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u3 = (DoubleVector) l3.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v3 = (DoubleVector) h3.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u4 = (DoubleVector) l4.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v4 = (DoubleVector) h4.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u5 = (DoubleVector) l5.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v5 = (DoubleVector) h5.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u6 = (DoubleVector) l6.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v6 = (DoubleVector) h6.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector u7 = (DoubleVector) l7.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v7 = (DoubleVector) h7.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                a0 = u0.fma(u0, a0);
                b0 = v0.fma(v0, b0);
                a1 = u1.fma(u1, a1);
                b1 = v1.fma(v1, b1);
                a2 = u2.fma(u2, a2);
                b2 = v2.fma(v2, b2);
                a3 = u3.fma(u3, a3);
                b3 = v3.fma(v3, b3);
                a4 = u4.fma(u4, a4);
                b4 = v4.fma(v4, b4);
                a5 = u5.fma(u5, a5);
                b5 = v5.fma(v5, b5);
                a6 = u6.fma(u6, a6);
                b6 = v6.fma(v6, b6);
                a7 = u7.fma(u7, a7);
                b7 = v7.fma(v7, b7);
                e += 8 * slots;
            }
            for (int r = rest; r > 0; r--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector l = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector h = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                ma = ma.max(l);
                mb = mb.max(h);
                DoubleVector u = (DoubleVector) l.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v = (DoubleVector) h.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                a0 = u.fma(u, a0);
                b0 = v.fma(v, b0);
                e += slots;
            }
            if (last) {
                DoubleVector even = a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7)));
                DoubleVector odd = b0.add(b1).add(b2.add(b3)).add(b4.add(b5).add(b6.add(b7)));
                ((DoubleVector) ma.convertShape(VectorOperators.I2D, D, 0)).intoArray(tmp, 2 * LANES);
                ((DoubleVector) mb.convertShape(VectorOperators.I2D, D, 0)).intoArray(tmp, 3 * LANES);
                even.mul(F16_SQUARES_SCALE).intoArray(tmp, 0);
                odd.mul(F16_SQUARES_SCALE).intoArray(tmp, LANES);
                writeF16(tmp, k, partials);
                continue;
            }
            a0.intoArray(acc, o);
            a1.intoArray(acc, o + LANES);
            a2.intoArray(acc, o + 2 * LANES);
            a3.intoArray(acc, o + 3 * LANES);
            a4.intoArray(acc, o + 4 * LANES);
            a5.intoArray(acc, o + 5 * LANES);
            a6.intoArray(acc, o + 6 * LANES);
            a7.intoArray(acc, o + 7 * LANES);
            b0.intoArray(acc, o + 8 * LANES);
            b1.intoArray(acc, o + 9 * LANES);
            b2.intoArray(acc, o + 10 * LANES);
            b3.intoArray(acc, o + 11 * LANES);
            b4.intoArray(acc, o + 12 * LANES);
            b5.intoArray(acc, o + 13 * LANES);
            b6.intoArray(acc, o + 14 * LANES);
            b7.intoArray(acc, o + 15 * LANES);
            ((DoubleVector) ma.convertShape(VectorOperators.I2D, D, 0)).intoArray(acc, o + 16 * LANES);
            ((DoubleVector) mb.convertShape(VectorOperators.I2D, D, 0)).intoArray(acc, o + 17 * LANES);
        }
    }

    /** Slots {@code k + 2i} and {@code k + 2i + 1} get the even sums' lane {@code i} ({@code tmp[i]}) and the odd ones' ({@code tmp[LANES + i]}). */
    private static void write(double[] tmp, long k, MemorySegment partials) {
        for (int i = 0; i < LANES; i++) {
            partials.setAtIndex(ValueLayout.JAVA_DOUBLE, k + 2 * i, tmp[i]);
            partials.setAtIndex(ValueLayout.JAVA_DOUBLE, k + 2 * i + 1, tmp[LANES + i]);
        }
    }

    /** As {@link #write}, each slot NaN or infinity where its largest magnitude ({@code tmp[2 * LANES ..]}, even slots first) says (the kernel's {@code finiteOr}). */
    private static void writeF16(double[] tmp, long k, MemorySegment partials) {
        for (int i = 0; i < LANES; i++) {
            partials.setAtIndex(ValueLayout.JAVA_DOUBLE, k + 2 * i, finiteOr(tmp[i], (int) tmp[2 * LANES + i]));
            partials.setAtIndex(ValueLayout.JAVA_DOUBLE, k + 2 * i + 1, finiteOr(tmp[LANES + i], (int) tmp[3 * LANES + i]));
        }
    }

    private static double finiteOr(double sum, int largest) {
        if (largest >= F16_INFINITY) {
            return largest > F16_INFINITY ? Double.NaN : Double.POSITIVE_INFINITY;
        }
        return sum;
    }

    /** {@code sumPartials}: slots {@code [from, end)} in steps of {@code LANES}, {@code rows} fp64 rows from row {@code row}, added in order. */
    private static void sumsF64(MemorySegment x, long slots, long from, long end, long row, int rows, double[] acc, int carry,
            boolean first, boolean last, MemorySegment partials) {
        for (long k = from; k < end; k += LANES) {
            int o = carry + (int) (k - from);
            DoubleVector s = first ? DoubleVector.zero(D) : DoubleVector.fromArray(D, acc, o);
            long e = k + row * slots;
            for (int r = rows; r > 0; r--) {
                s = s.add(DoubleVector.fromMemorySegment(D, x, 8 * e, ORDER));
                e += slots;
            }
            if (last) {
                s.intoMemorySegment(partials, 8 * k, ORDER);
            } else {
                s.intoArray(acc, o);
            }
        }
    }
}
