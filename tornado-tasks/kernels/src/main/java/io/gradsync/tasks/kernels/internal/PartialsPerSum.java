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
 * <p>The fp16 squares are taken as in {@code LaneKernels.squaresF16}: a long lane's four elements,
 * each shifted into a double's place, which one multiply makes exact; a piece of {@code 4 * LANES}
 * slots holds slot {@code 4i + j} in its {@code j}-th vector, and a range's odd last step of
 * {@code 2 * LANES} slots is {@link PartialsPerStep}'s. An infinity or NaN does not map so; a block
 * holding one is done again slot by slot by the caller's kernel.
 *
 * <p>Each type's pass is written out with the Vector API alone, its vectors never leaving the
 * method: a vector helper shared by loops lost C2's intrinsics after other kernels ran
 * ({@link LaneKernels}). A row's piece of {@code LANES} fp32 or {@code 2 * LANES} bf16 slots is
 * read as the lower half of a whole vector, which must lie within the array (the upper half, the
 * next piece, is read again with it: swapping the halves of one vector ran slower); fp16 rows are
 * read whole, {@code 4 * LANES} slots a vector of longs.
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
        blocks(PartialsPerSum::rowsF32, x, slots, from, from + steps * 2 * LANES, count, partials, 1, null);
    }

    /** See {@link Lanes#squaresPartialsBf16}: slots {@code [from, from + steps * 2 * LANES)}. */
    static void squaresBf16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        blocks(PartialsPerSum::rowsBf16, x, slots, from, from + steps * 2 * LANES, count, partials, 2, null);
    }

    /**
     * As {@link #squaresBf16} for fp16; a block holding an infinity or NaN has its slots set to
     * {@code slot.applyAsDouble(p)} instead, one by one.
     */
    static void squaresF16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials, LongToDoubleFunction slot) {
        long end = from + steps / 2 * 4 * LANES;
        blocks(PartialsPerSum::rowsF16, x, slots, from, end, count, partials, 4, slot);
        PartialsPerStep.squaresPartialsF16(x, slots, end, steps % 2, count, partials, slot);
    }

    /**
     * Adds the squares of rows {@code first, first + step, ...} ({@code rows} of them) of slots
     * {@code [b, b + width)} into {@code a} in order, from zero where {@code fresh} (every place set
     * even for no rows); returns whether it read an fp16 infinity or NaN (never for the other types).
     */
    private interface Pass {
        boolean add(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh);
    }

    /**
     * Slots {@code [from, end)} of {@code count} elements each, a block at a time: running sum
     * {@code s} over its rows {@code s, s + 8, ...} while whole groups of eight remain, then sum 0
     * over the rest; combined into {@code partials}, in slot order from the {@code ways} places a
     * vector's lanes were read into (1 fp32, 2 a word's halves, 4 a long's quarters), or, where a
     * block read an fp16 infinity or NaN, {@code redo} slot by slot.
     */
    private static void blocks(Pass pass, MemorySegment x, long slots, long from, long end, int count, MemorySegment partials,
            int ways, LongToDoubleFunction redo) {
        double[][] sums = SUMS.get();
        int groups = count / 8;
        for (long b = from; b < end; b += BLOCK) {
            int width = (int) Math.min(BLOCK, end - b);
            boolean nonFinite = false;
            for (int s = 0; s < 8; s++) {
                nonFinite |= pass.add(x, slots, b, width, s, 8, groups, sums[s], true);
            }
            if (count % 8 > 0) {
                nonFinite |= pass.add(x, slots, b, width, 8L * groups, 1, count % 8, sums[0], groups == 0);
            }
            if (nonFinite) {
                for (long p = b; p < b + width; p++) {
                    partials.setAtIndex(ValueLayout.JAVA_DOUBLE, p, redo.applyAsDouble(p));
                }
            } else if (ways == 4) {
                writeQuarters(sums, b, width, partials);
            } else if (ways == 2) {
                writePairs(sums, b, width, partials);
            } else {
                write(sums, b, width, partials);
            }
        }
    }

    /**
     * {@code sums[8][q] = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))} for the block's places
     * {@code [0, width)} (a multiple of the lanes), the eight sums added in the kernels' order.
     */
    private static void combine(double[][] sums, int width) {
        double[] s0 = sums[0], s1 = sums[1], s2 = sums[2], s3 = sums[3], s4 = sums[4], s5 = sums[5], s6 = sums[6], s7 = sums[7];
        double[] t = sums[8];
        for (int q = 0; q < width; q += LANES) {
            DoubleVector a = DoubleVector.fromArray(D, s0, q).add(DoubleVector.fromArray(D, s1, q))
                    .add(DoubleVector.fromArray(D, s2, q).add(DoubleVector.fromArray(D, s3, q)));
            DoubleVector c = DoubleVector.fromArray(D, s4, q).add(DoubleVector.fromArray(D, s5, q))
                    .add(DoubleVector.fromArray(D, s6, q).add(DoubleVector.fromArray(D, s7, q)));
            a.add(c).intoArray(t, q);
        }
    }

    /** {@link #combine}d sums of fp32 slots {@code [b, b + width)} into {@code partials}. */
    private static void write(double[][] sums, long b, int width, MemorySegment partials) {
        combine(sums, width);
        MemorySegment.copy(MemorySegment.ofArray(sums[8]), 0, partials, 8 * b, 8L * width);
    }

    /**
     * As {@link #write} for 16-bit slots, whose places hold a step's even slots, then its odd ones
     * (a word's two halves): put back in slot order first.
     */
    private static void writePairs(double[][] sums, long b, int width, MemorySegment partials) {
        combine(sums, width);
        double[] t = sums[8];
        DoubleVector first = DoubleVector.fromArray(D, PartialsPerStep.ZIP_FIRST, 0);
        DoubleVector second = DoubleVector.fromArray(D, PartialsPerStep.ZIP_SECOND, 0);
        for (int q = 0; q < width; q += 2 * LANES) {
            DoubleVector even = DoubleVector.fromArray(D, t, q);
            DoubleVector odd = DoubleVector.fromArray(D, t, q + LANES);
            first.selectFrom(even, odd).intoMemorySegment(partials, 8 * (b + q), ORDER);
            second.selectFrom(even, odd).intoMemorySegment(partials, 8 * (b + q + LANES), ORDER);
        }
    }

    /**
     * As {@link #writePairs} for fp16 slots read as longs: a piece of {@code 4 * LANES} places holds
     * slots {@code 4i + j} in its {@code j}-th vector; the even slots' two vectors interleaved, the
     * odd ones', then the two.
     */
    private static void writeQuarters(double[][] sums, long b, int width, MemorySegment partials) {
        combine(sums, width);
        double[] t = sums[8];
        DoubleVector first = DoubleVector.fromArray(D, PartialsPerStep.ZIP_FIRST, 0);
        DoubleVector second = DoubleVector.fromArray(D, PartialsPerStep.ZIP_SECOND, 0);
        for (int q = 0; q < width; q += 4 * LANES) {
            DoubleVector p0 = DoubleVector.fromArray(D, t, q);
            DoubleVector p1 = DoubleVector.fromArray(D, t, q + LANES);
            DoubleVector p2 = DoubleVector.fromArray(D, t, q + 2 * LANES);
            DoubleVector p3 = DoubleVector.fromArray(D, t, q + 3 * LANES);
            DoubleVector e0 = first.selectFrom(p0, p2), e1 = second.selectFrom(p0, p2);
            DoubleVector o0 = first.selectFrom(p1, p3), o1 = second.selectFrom(p1, p3);
            first.selectFrom(e0, o0).intoMemorySegment(partials, 8 * (b + q), ORDER);
            second.selectFrom(e0, o0).intoMemorySegment(partials, 8 * (b + q + LANES), ORDER);
            first.selectFrom(e1, o1).intoMemorySegment(partials, 8 * (b + q + 2 * LANES), ORDER);
            second.selectFrom(e1, o1).intoMemorySegment(partials, 8 * (b + q + 3 * LANES), ORDER);
        }
    }

    /** A {@link Pass} over fp32 rows. */
    private static boolean rowsF32(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh) {
        if (rows == 0) {
            if (fresh) {
                java.util.Arrays.fill(a, 0, width, 0.0);
            }
            return false;
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
        return false;
    }

    /** A {@link Pass} over bf16 rows: a word's low halves (even slots) into {@code a[q ..]}, its high halves into {@code a[q + LANES ..]}. */
    private static boolean rowsBf16(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh) {
        if (rows == 0) {
            if (fresh) {
                java.util.Arrays.fill(a, 0, width, 0.0);
            }
            return false;
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
        return false;
    }

    /**
     * As {@link #rowsBf16} for fp16, each row read as longs of four elements shifted into doubles'
     * places as {@code LaneKernels.squaresF16} does: a piece's {@code j}-th vector holds slots
     * {@code 4i + j}. Returns whether an element's magnitude carried into its top bit (an infinity
     * or NaN).
     */
    private static boolean rowsF16(MemorySegment x, long slots, long b, int width, long first, int step, int rows, double[] a, boolean fresh) {
        if (rows == 0) {
            if (fresh) {
                java.util.Arrays.fill(a, 0, width, 0.0);
            }
            return false;
        }
        long d = 2L * step * slots;
        LongVector carries = LongVector.zero(L);
        int c = 0;
        for (; c + 4 <= rows; c += 4) {
            boolean zero = fresh && c == 0;
            long row = 2L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += 4 * LANES) {
                DoubleVector u0 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                DoubleVector u1 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + LANES);
                DoubleVector u2 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + 2 * LANES);
                DoubleVector u3 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + 3 * LANES);
                long o = row + 2L * q;
                LongVector w0 = LongVector.fromMemorySegment(L, x, o, ORDER);
                LongVector w1 = LongVector.fromMemorySegment(L, x, o + d, ORDER);
                LongVector w2 = LongVector.fromMemorySegment(L, x, o + 2 * d, ORDER);
                LongVector w3 = LongVector.fromMemorySegment(L, x, o + 3 * d, ORDER);
                DoubleVector v00 = w0.lanewise(VectorOperators.LSHL, 42).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v01 = w0.lanewise(VectorOperators.LSHL, 26).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v02 = w0.lanewise(VectorOperators.LSHL, 10).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v03 = w0.lanewise(VectorOperators.LSHR, 6).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v10 = w1.lanewise(VectorOperators.LSHL, 42).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v11 = w1.lanewise(VectorOperators.LSHL, 26).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v12 = w1.lanewise(VectorOperators.LSHL, 10).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v13 = w1.lanewise(VectorOperators.LSHR, 6).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v20 = w2.lanewise(VectorOperators.LSHL, 42).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v21 = w2.lanewise(VectorOperators.LSHL, 26).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v22 = w2.lanewise(VectorOperators.LSHL, 10).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v23 = w2.lanewise(VectorOperators.LSHR, 6).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v30 = w3.lanewise(VectorOperators.LSHL, 42).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v31 = w3.lanewise(VectorOperators.LSHL, 26).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v32 = w3.lanewise(VectorOperators.LSHL, 10).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v33 = w3.lanewise(VectorOperators.LSHR, 6).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                v30.fma(v30, v20.fma(v20, v10.fma(v10, v00.fma(v00, u0)))).intoArray(a, q);
                v31.fma(v31, v21.fma(v21, v11.fma(v11, v01.fma(v01, u1)))).intoArray(a, q + LANES);
                v32.fma(v32, v22.fma(v22, v12.fma(v12, v02.fma(v02, u2)))).intoArray(a, q + 2 * LANES);
                v33.fma(v33, v23.fma(v23, v13.fma(v13, v03.fma(v03, u3)))).intoArray(a, q + 3 * LANES);
                carries = w0.and(0x7FFF_7FFF_7FFF_7FFFL).add(0x0400_0400_0400_0400L)
                        .or(w1.and(0x7FFF_7FFF_7FFF_7FFFL).add(0x0400_0400_0400_0400L))
                        .or(w2.and(0x7FFF_7FFF_7FFF_7FFFL).add(0x0400_0400_0400_0400L))
                        .or(w3.and(0x7FFF_7FFF_7FFF_7FFFL).add(0x0400_0400_0400_0400L)).or(carries);
            }
        }
        for (; c < rows; c++) {
            boolean zero = fresh && c == 0;
            long row = 2L * ((first + (long) c * step) * slots + b);
            for (int q = 0; q < width; q += 4 * LANES) {
                DoubleVector u0 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q);
                DoubleVector u1 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + LANES);
                DoubleVector u2 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + 2 * LANES);
                DoubleVector u3 = zero ? DoubleVector.zero(D) : DoubleVector.fromArray(D, a, q + 3 * LANES);
                LongVector w0 = LongVector.fromMemorySegment(L, x, row + 2L * q, ORDER);
                DoubleVector v00 = w0.lanewise(VectorOperators.LSHL, 42).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v01 = w0.lanewise(VectorOperators.LSHL, 26).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v02 = w0.lanewise(VectorOperators.LSHL, 10).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                DoubleVector v03 = w0.lanewise(VectorOperators.LSHR, 6).and(LaneKernels.F16_PLACE).reinterpretAsDoubles().mul(0x1p1008);
                v00.fma(v00, u0).intoArray(a, q);
                v01.fma(v01, u1).intoArray(a, q + LANES);
                v02.fma(v02, u2).intoArray(a, q + 2 * LANES);
                v03.fma(v03, u3).intoArray(a, q + 3 * LANES);
                carries = w0.and(0x7FFF_7FFF_7FFF_7FFFL).add(0x0400_0400_0400_0400L).or(carries);
            }
        }
        return (carries.reduceLanes(VectorOperators.OR) & 0x8000_8000_8000_8000L) != 0;
    }
}
