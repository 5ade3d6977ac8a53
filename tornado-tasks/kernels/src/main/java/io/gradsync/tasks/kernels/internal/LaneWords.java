package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.HalfFloats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The bf16 element-wise kernels in SIMD lanes (and fp32 {@code scale}), two elements to a 32-bit word: a word's low half
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
    private static final VectorSpecies<Integer> WORDS = IntVector.SPECIES_PREFERRED;
    /** Elements a step: two per word. */
    private static final int STEP = 2 * WORDS.length();
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Long> LONGS = LongVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> HALF_WORDS = VectorSpecies.of(int.class, VectorShape.forBitSize(32 * LONGS.length()));
    private static final VectorSpecies<Short> HALF_SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * WORDS.length()));
    /** Elements a conversion step: two per long. */
    private static final int PAIR_STEP = 2 * LONGS.length();
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;

    private LaneWords() {
    }

    /** Whether the shapes fit: a long of each two words, and a word vector of half the longs' bits (at least 64). */
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
     * average kernels' JVM form, {@code halfSum}).
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
     * {@code out[i]} = the bf16 nearest the float {@code in[i]}: the floats rounded in int lanes, then
     * each one's upper half narrowed to a short (one instruction where the lanes are 512 bits wide;
     * pairing the halves in longs took six and ran at two thirds of copy).
     */
    static void toBf16(MemorySegment in, MemorySegment out, int n) {
        int step = WORDS.length();
        long whole = n - n % step;
        for (long i = 0; i < whole; i += step) {
            IntVector high = nearest(IntVector.fromMemorySegment(WORDS, in, 4 * i, ORDER)).lanewise(VectorOperators.LSHR, 16);
            ((ShortVector) high.convertShape(VectorOperators.I2S, HALF_SHORTS, 0)).intoMemorySegment(out, 2 * i, ORDER);
        }
        for (long i = whole; i < n; i++) {
            out.set(SHORT, 2 * i, HalfFloats.floatToBf16(in.get(FLOAT, 4 * i)));
        }
    }

    /** {@code out[i]} = the float of bf16 {@code in[i]}: each word's two elements into one long. */
    static void fromBf16(MemorySegment in, MemorySegment out, int n) {
        long whole = n - n % PAIR_STEP;
        for (long i = 0; i < whole; i += PAIR_STEP) {
            LongVector w = ((LongVector) IntVector.fromMemorySegment(HALF_WORDS, in, 2 * i, ORDER)
                    .convertShape(VectorOperators.I2L, LONGS, 0)).and(0xFFFF_FFFFL);
            w.lanewise(VectorOperators.LSHL, 16).and(0xFFFF_0000L).or(w.and(0xFFFF_0000L).lanewise(VectorOperators.LSHL, 32))
                    .intoMemorySegment(out, 4 * i, ORDER);
        }
        for (long i = whole; i < n; i++) {
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
