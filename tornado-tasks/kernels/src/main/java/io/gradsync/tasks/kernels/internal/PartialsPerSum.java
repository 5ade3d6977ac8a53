package io.gradsync.tasks.kernels.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.function.LongToDoubleFunction;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The sums-of-squares partials kernels for tall arrays, one running sum at a time. Slot {@code p}
 * of {@code P} sums elements {@code p, p + P, ...}: element {@code j} into running sum
 * {@code j mod 8} while whole groups of eight remain, the rest into sum 0, the eight added
 * {@code ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))}. {@link PartialsPerStep} keeps a step's
 * sixteen sums in registers and reads every row of the step at once; with {@code P} a power of
 * two those rows' pieces share one first-level cache set, and past a few dozen rows each read
 * misses (bench/RESULTS.md). Here a block of {@link #BLOCK} slots (2,048) is taken sum by sum: sum
 * {@code s} reads its rows {@code s, s + 8, ...} four at a time across the block, its running
 * values kept in an array between those passes. At most four rows' pieces are then read at once,
 * each in order; the sums, and so the partials, are the kernels' bit for bit.
 *
 * <p>The fp16 squares are taken as in {@code LaneKernels.squaresF16}: a half's magnitude shifted
 * into a float is the value times 2^-112, so the sums are the kernels' times 2^-224 exactly
 * (nothing comes near either end of the float64 range) and are scaled back at the end. An infinity
 * or NaN does not map so; a block holding one is done again slot by slot by the caller's kernel.
 *
 * <p>Each type's pass is written out with the Vector API alone, its vectors never leaving the
 * method: a vector helper shared by loops lost C2's intrinsics after other kernels ran
 * ({@link LaneKernels}). A row's piece of {@code LANES} fp32 or {@code 2 * LANES} 16-bit slots is
 * read as the lower half of a whole vector, which must lie within the array (the upper half, the
 * next piece, is read again with it: swapping the halves of one vector ran slower).
 *
 * <p>Thread-safety: safe; each thread's running sums are its own ({@link #SUMS}), and a call
 * finishes with them before it returns.
 */
final class PartialsPerSum {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = D.length();
    // whole vectors of the float64 lanes' shape, of which a step uses the lower half (LaneKernels says why)
    private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, D.vectorShape());
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, D.vectorShape());
    private static final VectorSpecies<Long> L = VectorSpecies.of(long.class, D.vectorShape());
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    /**
     * Slots a block: a multiple of every step; a sum's values for it fill 16 KiB, in the first-level
     * cache. {@code -Dgradsync.partials.block} sets it (rounded down to a multiple of 64), to time
     * longer runs of each row against sums that leave that cache in one run.
     */
    static final int BLOCK = Math.max(64, Integer.getInteger("gradsync.partials.block", 2048) / 64 * 64);
    /**
     * Each thread's running sums for a block (eight), and a row for their combination: a launch's
     * tasks would otherwise allocate megabytes of them.
     */
    private static final ThreadLocal<double[][]> SUMS = ThreadLocal.withInitial(() -> new double[9][BLOCK]);

    private PartialsPerSum() {
    }

    /** See {@link Lanes#squaresPartialsF32}: slots {@code [from, from + steps * 2 * LANES)}, the float vectors of a pass a step of {@code LANES} apart. */
    static void squaresF32(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        blocks(PartialsPerSum::rowsF32, x, slots, from, from + steps * 2 * LANES, count, partials, false, 1.0, null);
    }

    /** See {@link Lanes#squaresPartialsBf16}: slots {@code [from, from + steps * 2 * LANES)}. */
    static void squaresBf16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        blocks(PartialsPerSum::rowsBf16, x, slots, from, from + steps * 2 * LANES, count, partials, true, 1.0, null);
    }

    /**
     * As {@link #squaresBf16} for fp16; a block holding an infinity or NaN has its slots set to
     * {@code slot.applyAsDouble(p)} instead, one by one.
     */
    static void squaresF16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials, LongToDoubleFunction slot) {
        blocks(PartialsPerSum::rowsF16, x, slots, from, from + steps * 2 * LANES, count, partials, true, PartialsPerStep.F16_SCALE, slot);
    }

    /**
     * Adds the squares of rows {@code first, first + step, ...} ({@code rows} of them) of slots
     * {@code [b, b + width)} into {@code a} in order, from zero where {@code fresh} (every place set
     * even for no rows); returns the largest fp16 magnitude read, as its bits shifted into a float's place ({@code PartialsPerStep.F16_INFINITY}; 0 for the other types).
     */
    private interface Pass {
        int add(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh);
    }

    /**
     * Slots {@code [from, end)} of {@code count} elements each, a block at a time: running sum
     * {@code s} over its rows {@code s, s + 8, ...} while whole groups of eight remain, then sum 0
     * over the rest; combined into {@code partials}, in slot order from a word's halves where
     * {@code pairs}, or, where a block read an fp16 infinity or NaN, {@code redo} slot by slot.
     */
    private static void blocks(Pass pass, MemorySegment x, long slots, long from, long end, int count, MemorySegment partials,
            boolean pairs, double scale, LongToDoubleFunction redo) {
        double[][] sums = SUMS.get();
        int groups = count / 8;
        for (long b = from; b < end; b += BLOCK) {
            int width = (int) Math.min(BLOCK, end - b);
            int largest = 0;
            for (int s = 0; s < 8; s++) {
                largest = Math.max(largest, pass.add(x, slots, b, width, s, 8, groups, sums[s], true));
            }
            if (count % 8 > 0) {
                largest = Math.max(largest, pass.add(x, slots, b, width, 8L * groups, 1, count % 8, sums[0], groups == 0));
            }
            if (largest >= PartialsPerStep.F16_INFINITY) {
                for (long p = b; p < b + width; p++) {
                    partials.setAtIndex(ValueLayout.JAVA_DOUBLE, p, redo.applyAsDouble(p));
                }
            } else if (pairs) {
                writePairs(sums, b, width, scale, partials);
            } else {
                write(sums, b, width, partials);
            }
        }
    }

    /**
     * {@code sums[8][q] = (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))) * scale} for the
     * block's places {@code [0, width)} (a multiple of the lanes), the eight sums added in the
     * kernels' order; the scale is a power of two.
     */
    private static void combine(double[][] sums, int width, double scale) {
        double[] s0 = sums[0], s1 = sums[1], s2 = sums[2], s3 = sums[3], s4 = sums[4], s5 = sums[5], s6 = sums[6], s7 = sums[7];
        double[] t = sums[8];
        for (int q = 0; q < width; q += LANES) {
            DoubleVector a = DoubleVector.fromArray(D, s0, q).add(DoubleVector.fromArray(D, s1, q))
                    .add(DoubleVector.fromArray(D, s2, q).add(DoubleVector.fromArray(D, s3, q)));
            DoubleVector c = DoubleVector.fromArray(D, s4, q).add(DoubleVector.fromArray(D, s5, q))
                    .add(DoubleVector.fromArray(D, s6, q).add(DoubleVector.fromArray(D, s7, q)));
            a.add(c).mul(scale).intoArray(t, q);
        }
    }

    /** {@link #combine}d sums of fp32 slots {@code [b, b + width)} into {@code partials}. */
    private static void write(double[][] sums, long b, int width, MemorySegment partials) {
        combine(sums, width, 1.0);
        MemorySegment.copy(MemorySegment.ofArray(sums[8]), 0, partials, 8 * b, 8L * width);
    }

    /**
     * As {@link #write} for 16-bit slots, whose places hold a step's even slots, then its odd ones
     * (a word's two halves): put back in slot order first.
     */
    private static void writePairs(double[][] sums, long b, int width, double scale, MemorySegment partials) {
        combine(sums, width, scale);
        double[] t = sums[8];
        LongVector first = LongVector.fromArray(L, PartialsPerStep.ZIP_FIRST, 0);
        LongVector second = LongVector.fromArray(L, PartialsPerStep.ZIP_SECOND, 0);
        for (int q = 0; q < width; q += 2 * LANES) {
            DoubleVector even = DoubleVector.fromArray(D, t, q);
            DoubleVector odd = DoubleVector.fromArray(D, t, q + LANES);
            first.selectFrom(even.reinterpretAsLongs(), odd.reinterpretAsLongs()).intoMemorySegment(partials, 8 * (b + q), ORDER);
            second.selectFrom(even.reinterpretAsLongs(), odd.reinterpretAsLongs()).intoMemorySegment(partials, 8 * (b + q + LANES), ORDER);
        }
    }

    /** A {@link Pass} over fp32 rows. */
    private static int rowsF32(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh) {
        if (rows == 0) {
            if (fresh) {
                java.util.Arrays.fill(a, 0, width, 0.0);
            }
            return 0;
        }
        long d = 4L * step * slots;
        int c = 0;
        for (; c + 4 <= rows; c += 4) {
            boolean zero = fresh && c == 0;
            long row = 4L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += LANES) {
                DoubleVector u = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                long o = row + 4L * q;
                DoubleVector v0 = (DoubleVector) FloatVector.fromMemorySegment(F, x, o, ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v1 = (DoubleVector) FloatVector.fromMemorySegment(F, x, o + d, ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v2 = (DoubleVector) FloatVector.fromMemorySegment(F, x, o + 2 * d, ORDER).convertShape(VectorOperators.F2D, D, 0);
                DoubleVector v3 = (DoubleVector) FloatVector.fromMemorySegment(F, x, o + 3 * d, ORDER).convertShape(VectorOperators.F2D, D, 0);
                v3.fma(v3, v2.fma(v2, v1.fma(v1, v0.fma(v0, u)))).intoArray(a, q);
            }
        }
        for (; c < rows; c++) {
            boolean zero = fresh && c == 0;
            long row = 4L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += LANES) {
                DoubleVector u = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                DoubleVector v = (DoubleVector) FloatVector.fromMemorySegment(F, x, row + 4L * q, ORDER).convertShape(VectorOperators.F2D, D, 0);
                v.fma(v, u).intoArray(a, q);
            }
        }
        return 0;
    }

    /** A {@link Pass} over bf16 rows: a word's low halves (even slots) into {@code a[q ..]}, its high halves into {@code a[q + LANES ..]}. */
    private static int rowsBf16(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh) {
        if (rows == 0) {
            if (fresh) {
                java.util.Arrays.fill(a, 0, width, 0.0);
            }
            return 0;
        }
        long d = 2L * step * slots;
        int c = 0;
        for (; c + 4 <= rows; c += 4) {
            boolean zero = fresh && c == 0;
            long row = 2L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += 2 * LANES) {
                DoubleVector u = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                DoubleVector v = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + LANES);
                long o = row + 2L * q;
                IntVector w0 = IntVector.fromMemorySegment(I, x, o, ORDER);
                IntVector w1 = IntVector.fromMemorySegment(I, x, o + d, ORDER);
                IntVector w2 = IntVector.fromMemorySegment(I, x, o + 2 * d, ORDER);
                IntVector w3 = IntVector.fromMemorySegment(I, x, o + 3 * d, ORDER);
                DoubleVector l0 = (DoubleVector) w0.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h0 = (DoubleVector) w0.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector l1 = (DoubleVector) w1.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h1 = (DoubleVector) w1.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector l2 = (DoubleVector) w2.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h2 = (DoubleVector) w2.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector l3 = (DoubleVector) w3.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h3 = (DoubleVector) w3.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                l3.fma(l3, l2.fma(l2, l1.fma(l1, l0.fma(l0, u)))).intoArray(a, q);
                h3.fma(h3, h2.fma(h2, h1.fma(h1, h0.fma(h0, v)))).intoArray(a, q + LANES);
            }
        }
        for (; c < rows; c++) {
            boolean zero = fresh && c == 0;
            long row = 2L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += 2 * LANES) {
                DoubleVector u = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                DoubleVector v = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + LANES);
                IntVector w = IntVector.fromMemorySegment(I, x, row + 2L * q, ORDER);
                DoubleVector l = (DoubleVector) w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h = (DoubleVector) w.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                l.fma(l, u).intoArray(a, q);
                h.fma(h, v).intoArray(a, q + LANES);
            }
        }
        return 0;
    }

    /** As {@link #rowsBf16} for fp16 magnitudes (times 2^-112). */
    private static int rowsF16(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh) {
        if (rows == 0) {
            if (fresh) {
                java.util.Arrays.fill(a, 0, width, 0.0);
            }
            return 0;
        }
        long d = 2L * step * slots;
        IntVector largest = IntVector.zero(I);
        int c = 0;
        for (; c + 4 <= rows; c += 4) {
            boolean zero = fresh && c == 0;
            long row = 2L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += 2 * LANES) {
                DoubleVector u = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                DoubleVector v = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + LANES);
                long o = row + 2L * q;
                IntVector w0 = IntVector.fromMemorySegment(I, x, o, ORDER);
                IntVector w1 = IntVector.fromMemorySegment(I, x, o + d, ORDER);
                IntVector w2 = IntVector.fromMemorySegment(I, x, o + 2 * d, ORDER);
                IntVector w3 = IntVector.fromMemorySegment(I, x, o + 3 * d, ORDER);
                IntVector m0 = w0.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector n0 = w0.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector m1 = w1.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector n1 = w1.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector m2 = w2.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector n2 = w2.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                IntVector m3 = w3.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector n3 = w3.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                DoubleVector l0 = (DoubleVector) m0.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h0 = (DoubleVector) n0.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector l1 = (DoubleVector) m1.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h1 = (DoubleVector) n1.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector l2 = (DoubleVector) m2.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h2 = (DoubleVector) n2.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector l3 = (DoubleVector) m3.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h3 = (DoubleVector) n3.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                l3.fma(l3, l2.fma(l2, l1.fma(l1, l0.fma(l0, u)))).intoArray(a, q);
                h3.fma(h3, h2.fma(h2, h1.fma(h1, h0.fma(h0, v)))).intoArray(a, q + LANES);
                largest = m0.max(n0).max(m1.max(n1)).max(m2.max(n2).max(m3.max(n3))).max(largest);
            }
        }
        for (; c < rows; c++) {
            boolean zero = fresh && c == 0;
            long row = 2L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += 2 * LANES) {
                DoubleVector u = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                DoubleVector v = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + LANES);
                IntVector w = IntVector.fromMemorySegment(I, x, row + 2L * q, ORDER);
                IntVector m = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                IntVector n = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                DoubleVector l = (DoubleVector) m.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                DoubleVector h = (DoubleVector) n.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                l.fma(l, u).intoArray(a, q);
                h.fma(h, v).intoArray(a, q + LANES);
                largest = m.max(n).max(largest);
            }
        }
        return largest.reduceLanes(VectorOperators.MAX, PartialsPerStep.LOWER);
    }
}
