package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.HalfFloats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The bf16 element-wise kernels in SIMD lanes (and fp32 {@code scale}, and the averages of 3 to 8
 * bf16 or fp16 replicas), two elements to a 32-bit word: a word's low half
 * shifted up is its even element's float, its high half masked its odd one's, and a result word is
 * the two rounded floats' upper halves put back (little-endian: element order). No lane changes
 * shape but in the conversions (a word beside the long of its two floats; a rounded float's upper
 * half narrowed to its short). fp32 arithmetic
 * rounded to the nearest bf16 (ties to even, a NaN made quiet) as {@code Bfloat16Array.set} does;
 * an odd last element as the kernel does it. {@link Lanes}' work, in a class of its own because
 * loading it needs the vector module.
 *
 * <p>Thread-safety: stateless.
 */
final class LaneWords {
    // One shape, the preferred, for every lane type here: the Vector API's own methods are compiled
    // from one JVM-wide profile of the vector classes that passed through them, and where C2 does
    // not know a vector's class (a loop variable, a call inlined late in a large method) it
    // dispatches by that profile. Three short shapes there made each operation a call, two gave
    // type checks and boxed vectors: the 16-bit averages at a fifth of their speed once the
    // conversions had run (bench/RESULTS.md, session 27). A conversion's narrower side is
    // therefore the low lanes of a vector of this shape (toBf16, fromBf16).
    private static final VectorSpecies<Integer> WORDS = IntVector.SPECIES_PREFERRED;
    /** Elements a step: two per word. */
    private static final int STEP = 2 * WORDS.length();
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Long> LONGS = LongVector.SPECIES_PREFERRED;
    /** Elements a conversion step: two per long. */
    private static final int PAIR_STEP = 2 * LONGS.length();
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    /** Elements of {@link #average} per call of its steps' loop. */
    private static final int BLOCK = 1024;
    /** A step's elements, one per short lane. */
    private static final VectorSpecies<Short> HALVES = VectorSpecies.of(short.class, WORDS.vectorShape());

    private LaneWords() {
    }

    /** Whether the shape fits: a long lane to each two word lanes, at least 128 bits. */
    static boolean suits() {
        return WORDS.length() == 2 * LONGS.length() && LONGS.vectorBitSize() >= 128;
    }

    /** {@code acc[i] = bf16(acc[i] + x[i])} for {@code n} elements. */
    static void sumInto(MemorySegment acc, MemorySegment x, int n) {
        long whole = n - n % STEP;
        for (long i = 0; i < whole; i += STEP) {
            IntVector a = IntVector.fromMemorySegment(WORDS, acc, 2 * i, ORDER);
            IntVector b = IntVector.fromMemorySegment(WORDS, x, 2 * i, ORDER);
            pack(even(a).add(even(b)), odd(a).add(odd(b))).intoMemorySegment(acc, 2 * i, ORDER);
        }
        for (long i = whole; i < n; i++) {
            acc.set(SHORT, 2 * i, HalfFloats.floatToBf16(bf16(acc, i) + bf16(x, i)));
        }
    }

    /**
     * Whether any of words {@code [from, to)} of {@code x}, masked by {@code magnitude} and added to
     * {@code carry}, has a bit of {@code signs} set ({@link Lanes#anyCarries}).
     */
    static boolean anyCarries(MemorySegment x, long from, long to, int magnitude, int carry, int signs) {
        int step = WORDS.length() * Lanes.uncountedOne; // words: one vector, a loop the JIT does not unroll
        long whole = from + (to - from) / step * step;
        IntVector carries = IntVector.zero(WORDS);
        for (long w = from; w < whole; w += step) {
            // the running value an argument, never the receiver (averageSteps says why)
            carries = IntVector.fromMemorySegment(WORDS, x, 4 * w, ORDER).and(magnitude).add(carry).or(carries);
        }
        int any = carries.reduceLanes(VectorOperators.OR);
        for (long w = whole; w < to; w++) {
            any |= (x.get(INT, 4 * w) & magnitude) + carry;
        }
        return (any & signs) != 0;
    }

    /** See {@link Lanes#storeFloats}: vector stores, where a bulk copy of a chunk's floats costs a call's checks per 2 KiB. */
    static void storeFloats(float[] from, int count, MemorySegment dst, long offset) {
        int whole = count - count % FLOATS.length();
        for (int i = 0; i < whole; i += FLOATS.length()) {
            FloatVector.fromArray(FLOATS, from, i).intoMemorySegment(dst, offset + 4L * i, ORDER);
        }
        for (int i = whole; i < count; i++) {
            dst.set(FLOAT, offset + 4L * i, from[i]);
        }
    }

    /** {@code x[i] = bf16(x[i] * s)} for {@code n} elements. */
    static void scale(MemorySegment x, float s, int n) {
        long whole = n - n % STEP;
        for (long i = 0; i < whole; i += STEP) {
            IntVector w = IntVector.fromMemorySegment(WORDS, x, 2 * i, ORDER);
            pack(even(w).mul(s), odd(w).mul(s)).intoMemorySegment(x, 2 * i, ORDER);
        }
        for (long i = whole; i < n; i++) {
            x.set(SHORT, 2 * i, HalfFloats.floatToBf16(bf16(x, i) * s));
        }
    }

    /** {@code x[i] *= s} in fp32 (a word is one element here), for {@code n} elements. */
    static void scaleF32(MemorySegment x, float s, int n) {
        long whole = n - n % WORDS.length();
        for (long i = 0; i < whole; i += WORDS.length()) {
            FloatVector.fromMemorySegment(FLOATS, x, 4 * i, ORDER).mul(s).intoMemorySegment(x, 4 * i, ORDER);
        }
        for (long i = whole; i < n; i++) {
            x.set(FLOAT, 4 * i, x.get(FLOAT, 4 * i) * s);
        }
    }

    /**
     * {@code out[i]} = the mean of two bf16 replicas rounded once, as {@code average2Bf16} with
     * {@code k = 2}: {@code a * 0.5f + b * 0.5f} rounds to bf16 as the float64 mean does (see the
     * JVM forms, {@code JvmFastForms.Type.loadHalfSum}).
     */
    static void averageTwo(MemorySegment out, MemorySegment a, MemorySegment b, int n) {
        long whole = n - n % STEP;
        for (long i = 0; i < whole; i += STEP) {
            IntVector x = IntVector.fromMemorySegment(WORDS, a, 2 * i, ORDER);
            IntVector y = IntVector.fromMemorySegment(WORDS, b, 2 * i, ORDER);
            pack(even(x).mul(0.5f).add(even(y).mul(0.5f)), odd(x).mul(0.5f).add(odd(y).mul(0.5f))).intoMemorySegment(out, 2 * i, ORDER);
        }
        for (long i = whole; i < n; i++) {
            out.set(SHORT, 2 * i, HalfFloats.floatToBf16(bf16(a, i) * 0.5f + bf16(b, i) * 0.5f));
        }
    }

    /**
     * {@code out[i]} = the mean of {@code in.length} (3 to 8) bf16 or fp16 replicas as the average
     * kernels define it with {@code k} = the count: the float64 sum in replica order divided by
     * {@code k}, rounded once to the type. In float lanes, where that gives the same bits: for bf16
     * where the inputs of an element are finite, below 2^125 and (those not zero) within 2^13 of
     * each other in magnitude (fp16: {@link #averageStepsF16}). Their float sum is then exact (at
     * most 24 significant bits), and its product by {@code 1/k} rounds as the quotient
     * ({@link #roundsAsQuotient}); for 7 the bf16 lanes settle a product that lies within four ulps
     * of a point halfway between two values of the type, and the fp16 lanes divide instead. The few
     * elements outside those bounds are done again one at a time as the kernel does them.
     */
    static void average(MemorySegment out, MemorySegment[] in, int n, boolean bf16) {
        float r = 1f / in.length;
        boolean roundsAsQuotient = roundsAsQuotient(in.length);
        long whole = n - n % STEP;
        for (long i = 0; i < whole; i += BLOCK) {
            long to = Math.min(whole, i + BLOCK);
            if (bf16) {
                averageSteps(out, in, i, to, r, roundsAsQuotient);
            } else {
                averageStepsF16(out, in, i, to, r, roundsAsQuotient);
            }
        }
        for (long i = whole; i < n; i++) {
            out.set(SHORT, 2 * i, averageOf(in, i, bf16));
        }
    }

    /**
     * Whether the product of an exact sum of {@link #average}'s inputs and the float {@code 1/k}
     * always rounds to bf16 or fp16 as the quotient does: for a power of two it is the quotient;
     * for 3, 5 and 6 the reciprocal is within 2^-25 of {@code 1/k}, so the product is within one
     * ulp of the quotient (within half an ulp of a quotient that is a tie, so equal to it). A
     * quotient that is not a tie lies at least {@code 8/k} ulps from every tie: the inputs, within
     * 2^13 (bf16) or 2^10 (fp16) of each other, make the sum a multiple of 2^-20 of the quotient's
     * binade times {@code k}, and a tie times {@code k} is one too. For 7 the reciprocal is 2^-24.4
     * off, and a tie's product can round past it: there the bf16 lanes check the products near a
     * tie, and the fp16 lanes divide ({@link #averageStepsF16}).
     */
    private static boolean roundsAsQuotient(int k) {
        return Integer.bitCount(k) == 1 || k == 3 || k == 5 || k == 6;
    }

    /**
     * The steps of {@link #average} from element {@code from} to {@code to}, {@code r = 1/k}. A
     * method called once per block, which C2 compiles whole: with the loop over all the steps
     * inside, it was compiled on the stack (OSR) at the inputs' loop, and its speed varied from one
     * run to the next; a method per step was too large to inline and cost a call per step.
     */
    private static void averageSteps(MemorySegment out, MemorySegment[] in, long from, long to, float r, boolean roundsAsQuotient) {
        FloatVector minusK = FloatVector.broadcast(FLOATS, -in.length);
        FloatVector plusK = FloatVector.broadcast(FLOATS, in.length);
        FloatVector reciprocal = FloatVector.broadcast(FLOATS, r);
        ShortVector zero = ShortVector.zero(HALVES);
        ShortVector one = ShortVector.broadcast(HALVES, (short) 1);
        for (long i = from; i < to; i += STEP) {
            FloatVector even = FloatVector.broadcast(FLOATS, -0f); // x + -0 is x, for any x
            FloatVector odd = even;
            ShortVector largest = zero;
            ShortVector smallestBelow = zero.not(); // unsigned: a zero's magnitude less one is the largest
            for (MemorySegment m : in) {
                IntVector w = IntVector.fromMemorySegment(WORDS, m, 2 * i, ORDER);
                // even() and odd() written out: helpers that other loops call may be compiled on
                // their own first, and then not inlined here (every vector boxed: RESULTS). The
                // running values are arguments, never receivers: a loop variable's class is
                // unknown where C2 parses a call on it, which then dispatches by the JVM-wide
                // profile of the Vector API's own methods; other kernels' shapes there boxed
                // every vector (bench/RESULTS.md, session 27). x + y is y + x in float (the
                // NaNs, whose payload might differ, are done again below).
                even = w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().add(even);
                odd = w.and(0xFFFF_0000).reinterpretAsFloats().add(odd);
                ShortVector magnitude = w.and(0x7FFF_7FFF).reinterpretAsShorts();
                largest = magnitude.max(largest);
                smallestBelow = magnitude.sub((short) 1).lanewise(VectorOperators.UMIN, smallestBelow);
            }
            ShortVector top = zero.or(largest).lanewise(VectorOperators.LSHR, 7); // exponent fields
            ShortVector bottom = one.add(smallestBelow).lanewise(VectorOperators.LSHR, 7);
            VectorMask<Short> redo = top.sub(bottom).compare(VectorOperators.GT, 13).or(top.compare(VectorOperators.GT, 0xFB));
            FloatVector qEven = reciprocal.mul(even);
            FloatVector qOdd = reciprocal.mul(odd);
            IntVector e = qEven.reinterpretAsInts();
            IntVector o = qOdd.reinterpretAsInts();
            if (!roundsAsQuotient) {
                // A product within four ulps of a tie t (low half 0x8000) that is not the quotient
                // (its remainder s - kq, exact as an fma, is not zero) takes t's bits, or one step
                // to the quotient's side of t: the sign of k(q - t) + (s - kq), exact (all of them
                // multiples of 2^-149 a few ulps of q in size); zero at a tie, which then rounds to
                // even. (Done again one at a time instead, these were one element in seventy of
                // bf16 data at k = 7, and took two fifths of the time.) Written out in each loop: a
                // helper shared by the two loops was compiled on its own after one of them was
                // recompiled, and then not inlined in the other (every vector boxed).
                FloatVector remE = qEven.fma(minusK, even);
                FloatVector remO = qOdd.fma(minusK, odd);
                IntVector tieE = e.and(0xFFFF_0000).or(0x8000);
                IntVector tieO = o.and(0xFFFF_0000).or(0x8000);
                IntVector sideE = qEven.sub(tieE.reinterpretAsFloats()).fma(plusK, remE).reinterpretAsInts();
                IntVector sideO = qOdd.sub(tieO.reinterpretAsFloats()).fma(plusK, remO).reinterpretAsInts();
                // +1 where the side's sign is the product's (away from zero), -1 where not, 0 at the tie
                IntVector stepE = sideE.lanewise(VectorOperators.XOR, e).lanewise(VectorOperators.ASHR, 31).or(1)
                        .blend(0, sideE.and(0x7FFF_FFFF).compare(VectorOperators.EQ, 0));
                IntVector stepO = sideO.lanewise(VectorOperators.XOR, o).lanewise(VectorOperators.ASHR, 31).or(1)
                        .blend(0, sideO.and(0x7FFF_FFFF).compare(VectorOperators.EQ, 0));
                e = e.blend(tieE.add(stepE), e.sub(0x7FFC).and(0xFFFF).compare(VectorOperators.LE, 8)
                        .and(remE.reinterpretAsInts().and(0x7FFF_FFFF).compare(VectorOperators.NE, 0)));
                o = o.blend(tieO.add(stepO), o.sub(0x7FFC).and(0xFFFF).compare(VectorOperators.LE, 8)
                        .and(remO.reinterpretAsInts().and(0x7FFF_FFFF).compare(VectorOperators.NE, 0)));
            }
            // to nearest, ties to even, as nearest() less its NaNs (those lanes are done again)
            e = e.add(e.lanewise(VectorOperators.LSHR, 16).and(1)).add(0x7FFF);
            o = o.add(o.lanewise(VectorOperators.LSHR, 16).and(1)).add(0x7FFF);
            long again = redo.toLong();
            short[] redone = again == 0 ? null : averagesOf(in, i, again, true); // before the store: out may be in[0]
            o.and(0xFFFF_0000).or(e.lanewise(VectorOperators.LSHR, 16)).intoMemorySegment(out, 2 * i, ORDER);
            if (again != 0) {
                patch(out, i, again, redone);
            }
        }
    }

    /**
     * The steps of {@link #average} for fp16, as {@link #averageSteps}: where an element's inputs are
     * finite and (those not zero) within 2^10 of each other in magnitude, their float sum is exact
     * (fp16 values have 11 significant bits). The lanes hold 2^-112 times each value: an fp16
     * value's bits moved into a float's exponent and fraction. Its fp16 steps are then the float's,
     * subnormals too (at 2^-136, still multiples of float's least step), so the float quotient
     * rounds to fp16 at its bit 13.
     */
    private static void averageStepsF16(MemorySegment out, MemorySegment[] in, long from, long to, float r, boolean roundsAsQuotient) {
        FloatVector plusK = FloatVector.broadcast(FLOATS, in.length);
        FloatVector reciprocal = FloatVector.broadcast(FLOATS, r);
        ShortVector zero = ShortVector.zero(HALVES);
        ShortVector one = ShortVector.broadcast(HALVES, (short) 1);
        for (long i = from; i < to; i += STEP) {
            FloatVector even = FloatVector.broadcast(FLOATS, -0f); // x + -0 is x, for any x
            FloatVector odd = even;
            ShortVector largest = zero;
            ShortVector smallestBelow = zero.not(); // unsigned: a zero's magnitude less one is the largest
            for (MemorySegment m : in) {
                IntVector w = IntVector.fromMemorySegment(WORDS, m, 2 * i, ORDER);
                // sign to bit 31, magnitude to bits 13..27; the running values arguments (see averageSteps)
                even = w.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 3).and(0x8FFF_E000).reinterpretAsFloats().add(even);
                odd = w.lanewise(VectorOperators.ASHR, 3).and(0x8FFF_E000).reinterpretAsFloats().add(odd);
                ShortVector magnitude = w.and(0x7FFF_7FFF).reinterpretAsShorts();
                largest = magnitude.max(largest);
                smallestBelow = magnitude.sub((short) 1).lanewise(VectorOperators.UMIN, smallestBelow);
            }
            ShortVector top = zero.or(largest).lanewise(VectorOperators.LSHR, 10); // exponent fields
            ShortVector bottom = one.add(smallestBelow).lanewise(VectorOperators.LSHR, 10);
            VectorMask<Short> redo = top.sub(bottom).compare(VectorOperators.GT, 10).or(top.compare(VectorOperators.GT, 30));
            // For 7 the float quotient, correctly rounded (the product with 1/7 can land on the
            // wrong side of a tie; done again one at a time, those were one step in three with
            // Gaussian replicas: bench/RESULTS.md, session 32). An exact sum s whose quotient is
            // not a tie t of fp16 has s - 7t a multiple of four float steps of t's binade (s is
            // one of its own steps, at least that, and 7t one of 2^12), so the quotient lies over
            // half a step from t, and the division, rounding by half a step at most, keeps its
            // side. (A subnormal tie: both multiples of 2^-137.)
            FloatVector qEven = roundsAsQuotient ? reciprocal.mul(even) : even.div(plusK);
            FloatVector qOdd = roundsAsQuotient ? reciprocal.mul(odd) : odd.div(plusK);
            IntVector e = qEven.reinterpretAsInts();
            IntVector o = qOdd.reinterpretAsInts();
            // to nearest at bit 13, ties to even, and the sign
            IntVector magE = e.and(0x7FFF_FFFF);
            IntVector magO = o.and(0x7FFF_FFFF);
            IntVector hE = magE.add(magE.lanewise(VectorOperators.LSHR, 13).and(1)).add(0x0FFF).lanewise(VectorOperators.LSHR, 13)
                    .or(e.lanewise(VectorOperators.LSHR, 16).and(0x8000));
            IntVector hO = magO.add(magO.lanewise(VectorOperators.LSHR, 13).and(1)).add(0x0FFF).lanewise(VectorOperators.LSHL, 3)
                    .and(0x7FFF_0000).or(o.and(0x8000_0000));
            long again = redo.toLong();
            short[] redone = again == 0 ? null : averagesOf(in, i, again, false); // before the store: out may be in[0]
            hE.or(hO).intoMemorySegment(out, 2 * i, ORDER);
            if (again != 0) {
                patch(out, i, again, redone);
            }
        }
    }

    /**
     * Element {@code i + j} of {@code out} set to the next of {@code redone} for each bit {@code j}
     * of {@code which}, in order. A method of its own: written out in the steps' loops, which C2
     * compiles with it once a single element has been done again, those loops ran at up to half
     * their speed, far more than the call costs (bench/RESULTS.md, session 31).
     */
    private static void patch(MemorySegment out, long i, long which, short[] redone) {
        for (int j = 0; which != 0; which &= which - 1, j++) {
            out.set(SHORT, 2 * (i + Long.numberOfTrailingZeros(which)), redone[j]);
        }
    }

    /** {@link #averageOf} for the elements of the step at {@code i} whose bits are set in {@code which}, in that order. */
    private static short[] averagesOf(MemorySegment[] in, long i, long which, boolean bf16) {
        short[] a = new short[Long.bitCount(which)];
        for (int j = 0; which != 0; which &= which - 1, j++) {
            a[j] = averageOf(in, i + Long.numberOfTrailingZeros(which), bf16);
        }
        return a;
    }

    /** Element {@code e} of {@link #average} as the kernel does it. */
    private static short averageOf(MemorySegment[] in, long e, boolean bf16) {
        double sum = 0;
        for (int j = 0; j < in.length; j++) {
            short bits = in[j].get(SHORT, 2 * e);
            float v = bf16 ? HalfFloats.bf16ToFloat(bits) : HalfFloats.halfToFloat(bits);
            sum = j == 0 ? v : sum + v; // not 0 + ...: a sum of -0 stays -0
        }
        float k = in.length;
        float q = HalfFloats.roundToOdd(Quotients.divide(sum, k, 1.0 / k));
        return bf16 ? HalfFloats.floatToBf16(q) : HalfFloats.floatToHalf(q);
    }

    /**
     * {@code out[i]} = the bf16 nearest the float {@code in[i]}: the floats rounded in int lanes, then
     * each one's upper half narrowed to a short (one instruction where the lanes are 512 bits wide;
     * pairing the halves in longs took six and ran at two thirds of copy). The narrowed shorts fill
     * the low half of a short vector, stored whole: its zeros land on the next step's elements,
     * which that step or the element loop after the last step then writes (a masked store ran at
     * two thirds of this speed). Written in place the stores stay below the floats still to be read.
     */
    static void toBf16(MemorySegment in, MemorySegment out, int n) {
        int step = WORDS.length();
        long i = 0;
        for (long last = n - 2L * step; i <= last; i += step) { // a step's store reaches a step further
            IntVector high = nearest(IntVector.fromMemorySegment(WORDS, in, 4 * i, ORDER)).lanewise(VectorOperators.LSHR, 16);
            ((ShortVector) high.convertShape(VectorOperators.I2S, HALVES, 0)).intoMemorySegment(out, 2 * i, ORDER);
        }
        for (; i < n; i++) {
            out.set(SHORT, 2 * i, HalfFloats.floatToBf16(in.get(FLOAT, 4 * i)));
        }
    }

    /**
     * {@code out[i]} = the float of bf16 {@code in[i]}: each word's two elements into one long. A
     * step reads a whole word vector and widens its low half (a masked load ran at half this
     * speed); the steps stop where that vector would pass the input's end.
     */
    static void fromBf16(MemorySegment in, MemorySegment out, int n) {
        // the last element a step may start at: its whole step within n, its vector within the input
        long last = Math.min(n - PAIR_STEP, Math.floorDiv(in.byteSize() - WORDS.vectorByteSize(), 2));
        long i = 0;
        for (; i <= last; i += PAIR_STEP) {
            LongVector w = ((LongVector) IntVector.fromMemorySegment(WORDS, in, 2 * i, ORDER)
                    .convertShape(VectorOperators.I2L, LONGS, 0)).and(0xFFFF_FFFFL);
            w.lanewise(VectorOperators.LSHL, 16).and(0xFFFF_0000L).or(w.and(0xFFFF_0000L).lanewise(VectorOperators.LSHL, 32))
                    .intoMemorySegment(out, 4 * i, ORDER);
        }
        for (; i < n; i++) {
            out.set(FLOAT, 4 * i, bf16(in, i));
        }
    }

    private static float bf16(MemorySegment m, long i) {
        return HalfFloats.bf16ToFloat(m.get(SHORT, 2 * i));
    }

    /** Each word's even (low) element as its float (these lanes' shape only, see {@code LaneKernels}). */
    private static FloatVector even(IntVector words) {
        return words.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /** Each word's odd (high) element as its float (these lanes' shape only, see {@code LaneKernels}). */
    private static FloatVector odd(IntVector words) {
        return words.and(0xFFFF_0000).reinterpretAsFloats();
    }

    /** The even and odd elements' floats rounded to bf16 and put back into their words. */
    private static IntVector pack(FloatVector even, FloatVector odd) {
        return nearest(odd.reinterpretAsInts()).and(0xFFFF_0000).or(nearest(even.reinterpretAsInts()).lanewise(VectorOperators.LSHR, 16));
    }

    /**
     * {@link HalfFloats#bf16InHighHalf}, lane by lane, on these lanes' shape only (see
     * {@code LaneKernels}): the bf16 nearest each float's bits, in the upper half.
     */
    private static IntVector nearest(IntVector bits) {
        IntVector nan = bits.broadcast(0x7F80_0000).sub(bits.and(0x7FFF_FFFF)).lanewise(VectorOperators.ASHR, 31);
        IntVector bias = bits.lanewise(VectorOperators.LSHR, 16).and(1).add(0x7FFF).and(nan.not());
        return bits.add(bias).or(nan.and(0x0040_0000));
    }
}
