package io.gradsync.tasks.kernels.internal;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.function.LongToDoubleFunction;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The 16-bit partials kernels in whole-row steps, for rows that crowd one first-level cache set
 * ({@link Lanes#crowded}): a step of {@code 4 * LANES} slots reads each of its rows as one whole
 * word vector (a cache line where aligned), where {@link PartialsPerStep}'s steps of
 * {@code 2 * LANES} read every row's vector twice, in two steps, and the second read misses
 * (bench/RESULTS.md, session 29). Sixteen slot vectors of eight running sums would not fit the
 * registers, so a step adds sums 4-7 over their rows, then sums 0-3 and the rows past the last
 * whole group, and joins the two fours' trees {@code ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))}
 * through its own place in the partials: the sums are the kernels' bit for bit. Sums 4-7 are taken
 * for a block of {@link #BLOCK_STEPS} steps before sums 0-3 are, so that only half the rows are read
 * at a time: sixteen rows a power of two apart share one set of the second-level cache too, and
 * read together they pushed each other's prefetched lines out (bench/RESULTS.md, session 31). Written out with
 * the Vector API alone, as the other partials are ({@link LaneKernels} says why); no vector enters
 * or leaves a method (one that passes four did not fit C2's inlining and was boxed).
 *
 * <p>Each step is larger than C2 parses at once: past its node cutoff, the rest of the Vector API
 * calls are inlined late, their results typed only as {@code DoubleVector}, and an intrinsic given
 * such a value may fail to unbox it. It is retried after the boxes were to be removed, so that in
 * some runs (which ones depends on the profile) the sums were boxed in every row's iteration and
 * the step took twice as long. Every double and long vector here is therefore cast to its shape's class where
 * it is made or enters an operation ({@link #DOUBLES}, {@link #LONGS}): a cast that costs nothing
 * once the types are known.
 *
 * <p>Thread-safety: stateless.
 */
final class PartialsWholeRows {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = D.length();
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, D.vectorShape());
    private static final VectorSpecies<Long> L = VectorSpecies.of(long.class, D.vectorShape());
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    /** The shape's double and long vector classes, which those vectors here are cast to (see the class comment). */
    @SuppressWarnings("unchecked")
    private static final Class<DoubleVector> DOUBLES = (Class<DoubleVector>) (Class<?>) D.vectorType();
    @SuppressWarnings("unchecked")
    private static final Class<LongVector> LONGS = (Class<LongVector>) (Class<?>) L.vectorType();

    /**
     * Steps whose sums 4-7 are taken before their sums 0-3: the block's trees of sums 4-7, which
     * wait in the partials for sums 0-3, take 64 KiB there, and stay in the first two cache levels.
     */
    static final int BLOCK_STEPS = 256;

    private PartialsWholeRows() {
    }

    /** See {@link Lanes#squaresPartialsBf16}, in whole-row steps of {@code 4 * LANES} slots. */
    static void squaresBf16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        long end = from + steps * 4 * LANES;
        for (long block = from; block < end; block += BLOCK_STEPS * 4 * LANES) {
            long blockEnd = Math.min(end, block + BLOCK_STEPS * 4 * LANES);
            fourSumsBf16(x, slots, block, blockEnd, count, 4, partials);
            fourSumsBf16(x, slots, block, blockEnd, count, 0, partials);
        }
    }

    /**
     * For each whole-row step at slot {@code k} in {@code [from, to)} (a call a block, not a step:
     * bench/RESULTS.md, session 42): running sums {@code s .. s + 3}, sum {@code s} also
     * over the rows past the last whole group where {@code s} is 0; their tree
     * {@code (s0 + s1) + (s2 + s3)} stored in lane order at the step's place in {@code partials}
     * ({@code s} 4), or added to the one stored there and written back in slot order ({@code s} 0:
     * the four vectors are the even slots of the step's lower half, its odd ones, then the upper
     * half's). A word vector's lower half converts as part 0 (its even slots shifted, its odd ones
     * masked), its upper half after the halves swap.
     */
    private static void fourSumsBf16(MemorySegment x, long slots, long from, long to, int count, int s, MemorySegment partials) {
        x = LaneKernels.NATIVE.cast(x); // native memory alone (Lanes sends no other): see LaneKernels.NATIVE
        partials = LaneKernels.NATIVE.cast(partials);
        for (long k = from; k < to; k += 4 * LANES) {
            DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0; // sum s, the step's four slot vectors
            DoubleVector b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            DoubleVector c0 = a0, c1 = a0, c2 = a0, c3 = a0;
            DoubleVector d0 = a0, d1 = a0, d2 = a0, d3 = a0;
            long e = k + s * slots;
            for (int g = count / 8; g > 0; g--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector u = w.lanewise(VectorOperators.LSHL, 16), v = w.and(0xFFFF_0000);
                DoubleVector p0 = DOUBLES.cast(u.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p1 = DOUBLES.cast(v.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p2 = DOUBLES.cast(u.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p3 = DOUBLES.cast(v.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                a0 = p0.fma(p0, DOUBLES.cast(a0)); a1 = p1.fma(p1, DOUBLES.cast(a1)); a2 = p2.fma(p2, DOUBLES.cast(a2)); a3 = p3.fma(p3, DOUBLES.cast(a3));
                w = IntVector.fromMemorySegment(I, x, 2 * (e + slots), ORDER);
                u = w.lanewise(VectorOperators.LSHL, 16);
                v = w.and(0xFFFF_0000);
                p0 = DOUBLES.cast(u.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p1 = DOUBLES.cast(v.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p2 = DOUBLES.cast(u.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p3 = DOUBLES.cast(v.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                b0 = p0.fma(p0, DOUBLES.cast(b0)); b1 = p1.fma(p1, DOUBLES.cast(b1)); b2 = p2.fma(p2, DOUBLES.cast(b2)); b3 = p3.fma(p3, DOUBLES.cast(b3));
                w = IntVector.fromMemorySegment(I, x, 2 * (e + 2 * slots), ORDER);
                u = w.lanewise(VectorOperators.LSHL, 16);
                v = w.and(0xFFFF_0000);
                p0 = DOUBLES.cast(u.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p1 = DOUBLES.cast(v.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p2 = DOUBLES.cast(u.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p3 = DOUBLES.cast(v.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                c0 = p0.fma(p0, DOUBLES.cast(c0)); c1 = p1.fma(p1, DOUBLES.cast(c1)); c2 = p2.fma(p2, DOUBLES.cast(c2)); c3 = p3.fma(p3, DOUBLES.cast(c3));
                w = IntVector.fromMemorySegment(I, x, 2 * (e + 3 * slots), ORDER);
                u = w.lanewise(VectorOperators.LSHL, 16);
                v = w.and(0xFFFF_0000);
                p0 = DOUBLES.cast(u.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p1 = DOUBLES.cast(v.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p2 = DOUBLES.cast(u.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p3 = DOUBLES.cast(v.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                d0 = p0.fma(p0, DOUBLES.cast(d0)); d1 = p1.fma(p1, DOUBLES.cast(d1)); d2 = p2.fma(p2, DOUBLES.cast(d2)); d3 = p3.fma(p3, DOUBLES.cast(d3));
                e += 8 * slots;
            }
            e = k + 8L * (count / 8) * slots;
            for (int r = s == 0 ? count % 8 : 0; r > 0; r--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector u = w.lanewise(VectorOperators.LSHL, 16), v = w.and(0xFFFF_0000);
                DoubleVector p0 = DOUBLES.cast(u.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p1 = DOUBLES.cast(v.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p2 = DOUBLES.cast(u.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p3 = DOUBLES.cast(v.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                a0 = p0.fma(p0, DOUBLES.cast(a0)); a1 = p1.fma(p1, DOUBLES.cast(a1)); a2 = p2.fma(p2, DOUBLES.cast(a2)); a3 = p3.fma(p3, DOUBLES.cast(a3));
                e += slots;
            }
            a0 = DOUBLES.cast(a0); a1 = DOUBLES.cast(a1); a2 = DOUBLES.cast(a2); a3 = DOUBLES.cast(a3);
            b0 = DOUBLES.cast(b0); b1 = DOUBLES.cast(b1); b2 = DOUBLES.cast(b2); b3 = DOUBLES.cast(b3);
            c0 = DOUBLES.cast(c0); c1 = DOUBLES.cast(c1); c2 = DOUBLES.cast(c2); c3 = DOUBLES.cast(c3);
            d0 = DOUBLES.cast(d0); d1 = DOUBLES.cast(d1); d2 = DOUBLES.cast(d2); d3 = DOUBLES.cast(d3);
            DoubleVector t0 = DOUBLES.cast(DOUBLES.cast(a0.add(b0)).add(DOUBLES.cast(c0.add(d0))));
            DoubleVector t1 = DOUBLES.cast(DOUBLES.cast(a1.add(b1)).add(DOUBLES.cast(c1.add(d1))));
            DoubleVector t2 = DOUBLES.cast(DOUBLES.cast(a2.add(b2)).add(DOUBLES.cast(c2.add(d2))));
            DoubleVector t3 = DOUBLES.cast(DOUBLES.cast(a3.add(b3)).add(DOUBLES.cast(c3.add(d3))));
            long at = 8 * k;
            if (s == 4) {
                t0.intoMemorySegment(partials, at, ORDER);
                t1.intoMemorySegment(partials, at + 8 * LANES, ORDER);
                t2.intoMemorySegment(partials, at + 16 * LANES, ORDER);
                t3.intoMemorySegment(partials, at + 24 * LANES, ORDER);
                continue;
            }
            // sums 4-7's tree is there: (s0 + s1) + (s2 + s3) comes first in the sum, which is one addition
            DoubleVector e0 = DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at, ORDER).add(t0));
            DoubleVector o0 = DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at + 8 * LANES, ORDER).add(t1));
            DoubleVector e1 = DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at + 16 * LANES, ORDER).add(t2));
            DoubleVector o1 = DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at + 24 * LANES, ORDER).add(t3));
            LongVector first = LONGS.cast(LongVector.fromArray(L, PartialsPerStep.ZIP_FIRST, 0));
            LongVector second = LONGS.cast(LongVector.fromArray(L, PartialsPerStep.ZIP_SECOND, 0));
            LONGS.cast(first.selectFrom(LONGS.cast(e0.reinterpretAsLongs()), LONGS.cast(o0.reinterpretAsLongs()))).intoMemorySegment(partials, at, ORDER);
            LONGS.cast(second.selectFrom(LONGS.cast(e0.reinterpretAsLongs()), LONGS.cast(o0.reinterpretAsLongs()))).intoMemorySegment(partials, at + 8 * LANES, ORDER);
            LONGS.cast(first.selectFrom(LONGS.cast(e1.reinterpretAsLongs()), LONGS.cast(o1.reinterpretAsLongs()))).intoMemorySegment(partials, at + 16 * LANES, ORDER);
            LONGS.cast(second.selectFrom(LONGS.cast(e1.reinterpretAsLongs()), LONGS.cast(o1.reinterpretAsLongs()))).intoMemorySegment(partials, at + 24 * LANES, ORDER);
        }
    }

    /** See {@link Lanes#squaresPartialsF16}, in whole-row steps of {@code 4 * LANES} slots. */
    static void squaresF16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials,
            LongToDoubleFunction slot) {
        long end = from + steps * 4 * LANES;
        for (long block = from; block < end; block += BLOCK_STEPS * 4 * LANES) {
            long blockEnd = Math.min(end, block + BLOCK_STEPS * 4 * LANES);
            fourSumsF16(x, slots, block, blockEnd, count, 4, partials, slot);
            fourSumsF16(x, slots, block, blockEnd, count, 0, partials, slot);
        }
    }

    /**
     * As {@link #fourSumsBf16} for fp16, magnitudes shifted into floats as
     * {@link PartialsPerStep#squaresPartialsF16} does; for {@code s} 0, a step whose sums may hold
     * an infinity or NaN ({@link PartialsPerStep#F16_SUSPECT}) is done again by {@code slot}.
     */
    private static void fourSumsF16(MemorySegment x, long slots, long from, long to, int count, int s, MemorySegment partials,
            LongToDoubleFunction slot) {
        x = LaneKernels.NATIVE.cast(x); // native memory alone (Lanes sends no other): see LaneKernels.NATIVE
        partials = LaneKernels.NATIVE.cast(partials);
        for (long k = from; k < to; k += 4 * LANES) {
            DoubleVector a0 = DoubleVector.zero(D), a1 = a0, a2 = a0, a3 = a0; // sum s, the step's four slot vectors
            DoubleVector b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            DoubleVector c0 = a0, c1 = a0, c2 = a0, c3 = a0;
            DoubleVector d0 = a0, d1 = a0, d2 = a0, d3 = a0;
            long e = k + s * slots;
            for (int g = count / 8; g > 0; g--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector l = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13), h = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                DoubleVector p0 = DOUBLES.cast(l.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p1 = DOUBLES.cast(h.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p2 = DOUBLES.cast(l.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p3 = DOUBLES.cast(h.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                a0 = p0.fma(p0, DOUBLES.cast(a0)); a1 = p1.fma(p1, DOUBLES.cast(a1)); a2 = p2.fma(p2, DOUBLES.cast(a2)); a3 = p3.fma(p3, DOUBLES.cast(a3));
                w = IntVector.fromMemorySegment(I, x, 2 * (e + slots), ORDER);
                l = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                h = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                p0 = DOUBLES.cast(l.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p1 = DOUBLES.cast(h.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p2 = DOUBLES.cast(l.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p3 = DOUBLES.cast(h.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                b0 = p0.fma(p0, DOUBLES.cast(b0)); b1 = p1.fma(p1, DOUBLES.cast(b1)); b2 = p2.fma(p2, DOUBLES.cast(b2)); b3 = p3.fma(p3, DOUBLES.cast(b3));
                w = IntVector.fromMemorySegment(I, x, 2 * (e + 2 * slots), ORDER);
                l = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                h = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                p0 = DOUBLES.cast(l.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p1 = DOUBLES.cast(h.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p2 = DOUBLES.cast(l.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p3 = DOUBLES.cast(h.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                c0 = p0.fma(p0, DOUBLES.cast(c0)); c1 = p1.fma(p1, DOUBLES.cast(c1)); c2 = p2.fma(p2, DOUBLES.cast(c2)); c3 = p3.fma(p3, DOUBLES.cast(c3));
                w = IntVector.fromMemorySegment(I, x, 2 * (e + 3 * slots), ORDER);
                l = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
                h = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                p0 = DOUBLES.cast(l.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p1 = DOUBLES.cast(h.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p2 = DOUBLES.cast(l.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                p3 = DOUBLES.cast(h.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                d0 = p0.fma(p0, DOUBLES.cast(d0)); d1 = p1.fma(p1, DOUBLES.cast(d1)); d2 = p2.fma(p2, DOUBLES.cast(d2)); d3 = p3.fma(p3, DOUBLES.cast(d3));
                e += 8 * slots;
            }
            e = k + 8L * (count / 8) * slots;
            for (int r = s == 0 ? count % 8 : 0; r > 0; r--) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * e, ORDER);
                IntVector l = w.and(0x7FFF).lanewise(VectorOperators.LSHL, 13), h = w.lanewise(VectorOperators.LSHR, 3).and(0x0FFF_E000);
                DoubleVector p0 = DOUBLES.cast(l.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p1 = DOUBLES.cast(h.reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p2 = DOUBLES.cast(l.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                DoubleVector p3 = DOUBLES.cast(h.rearrange(LaneKernels.SWAP_I).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0));
                a0 = p0.fma(p0, DOUBLES.cast(a0)); a1 = p1.fma(p1, DOUBLES.cast(a1)); a2 = p2.fma(p2, DOUBLES.cast(a2)); a3 = p3.fma(p3, DOUBLES.cast(a3));
                e += slots;
            }
            a0 = DOUBLES.cast(a0); a1 = DOUBLES.cast(a1); a2 = DOUBLES.cast(a2); a3 = DOUBLES.cast(a3);
            b0 = DOUBLES.cast(b0); b1 = DOUBLES.cast(b1); b2 = DOUBLES.cast(b2); b3 = DOUBLES.cast(b3);
            c0 = DOUBLES.cast(c0); c1 = DOUBLES.cast(c1); c2 = DOUBLES.cast(c2); c3 = DOUBLES.cast(c3);
            d0 = DOUBLES.cast(d0); d1 = DOUBLES.cast(d1); d2 = DOUBLES.cast(d2); d3 = DOUBLES.cast(d3);
            DoubleVector t0 = DOUBLES.cast(DOUBLES.cast(a0.add(b0)).add(DOUBLES.cast(c0.add(d0))));
            DoubleVector t1 = DOUBLES.cast(DOUBLES.cast(a1.add(b1)).add(DOUBLES.cast(c1.add(d1))));
            DoubleVector t2 = DOUBLES.cast(DOUBLES.cast(a2.add(b2)).add(DOUBLES.cast(c2.add(d2))));
            DoubleVector t3 = DOUBLES.cast(DOUBLES.cast(a3.add(b3)).add(DOUBLES.cast(c3.add(d3))));
            long at = 8 * k;
            if (s == 4) {
                t0.intoMemorySegment(partials, at, ORDER);
                t1.intoMemorySegment(partials, at + 8 * LANES, ORDER);
                t2.intoMemorySegment(partials, at + 16 * LANES, ORDER);
                t3.intoMemorySegment(partials, at + 24 * LANES, ORDER);
                continue;
            }
            // as fourSumsBf16, the sums scaled back
            DoubleVector e0 = DOUBLES.cast(DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at, ORDER).add(t0)).mul(PartialsPerStep.F16_SCALE));
            DoubleVector o0 = DOUBLES.cast(DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at + 8 * LANES, ORDER).add(t1)).mul(PartialsPerStep.F16_SCALE));
            DoubleVector e1 = DOUBLES.cast(DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at + 16 * LANES, ORDER).add(t2)).mul(PartialsPerStep.F16_SCALE));
            DoubleVector o1 = DOUBLES.cast(DOUBLES.cast(DoubleVector.fromMemorySegment(D, partials, at + 24 * LANES, ORDER).add(t3)).mul(PartialsPerStep.F16_SCALE));
            LongVector first = LONGS.cast(LongVector.fromArray(L, PartialsPerStep.ZIP_FIRST, 0));
            LongVector second = LONGS.cast(LongVector.fromArray(L, PartialsPerStep.ZIP_SECOND, 0));
            LONGS.cast(first.selectFrom(LONGS.cast(e0.reinterpretAsLongs()), LONGS.cast(o0.reinterpretAsLongs()))).intoMemorySegment(partials, at, ORDER);
            LONGS.cast(second.selectFrom(LONGS.cast(e0.reinterpretAsLongs()), LONGS.cast(o0.reinterpretAsLongs()))).intoMemorySegment(partials, at + 8 * LANES, ORDER);
            LONGS.cast(first.selectFrom(LONGS.cast(e1.reinterpretAsLongs()), LONGS.cast(o1.reinterpretAsLongs()))).intoMemorySegment(partials, at + 16 * LANES, ORDER);
            LONGS.cast(second.selectFrom(LONGS.cast(e1.reinterpretAsLongs()), LONGS.cast(o1.reinterpretAsLongs()))).intoMemorySegment(partials, at + 24 * LANES, ORDER);
            if (e0.compare(VectorOperators.GE, PartialsPerStep.F16_SUSPECT).or(o0.compare(VectorOperators.GE, PartialsPerStep.F16_SUSPECT))
                    .or(e1.compare(VectorOperators.GE, PartialsPerStep.F16_SUSPECT).or(o1.compare(VectorOperators.GE, PartialsPerStep.F16_SUSPECT))).anyTrue()) {
                PartialsPerStep.redoSuspects(partials, k, 4 * LANES, slot);
            }
        }
    }
}
