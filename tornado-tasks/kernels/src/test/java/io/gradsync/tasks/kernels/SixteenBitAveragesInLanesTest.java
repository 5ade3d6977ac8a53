package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.kernels.internal.Lanes;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.InvocationTargetException;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The averages of 3 to 8 bf16 or fp16 replicas by their count, whose JVM form adds them in float lanes
 * where that gives the kernel's bits and does the other elements one at a time: gradient-like
 * replicas (the float lanes' case) with every kind of element that must leave them, against the
 * kernel's own Java body, bit for bit. {@link JvmFastFormsTest} covers random bit patterns, where
 * the float lanes seldom apply.
 */
class SixteenBitAveragesInLanesTest {

    static Stream<Arguments> cases() {
        return Stream.of(true, false).flatMap(bf16 -> IntStream.rangeClosed(3, 8).mapToObj(k -> Arguments.of(bf16 ? "bf16" : "fp16", k)));
    }

    @ParameterizedTest(name = "{0}, {1} replicas")
    @MethodSource("cases")
    void sameBitsAsTheKernel(String type, int replicas) throws Exception {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the form's plain loops are what JvmFastFormsTest checks");
        boolean bf16 = type.equals("bf16");
        KernelSpec spec = bf16 ? BuiltinKernels.averageBf16(replicas) : BuiltinKernels.averageF16(replicas);
        SplittableRandom rnd = new SplittableRandom(replicas * 7919L + (bf16 ? 0 : 1));
        int chunk = JvmFastForms.CHUNK; // shorter arrays run the kernel itself
        for (int n : new int[] {chunk, chunk + 31, 4 * chunk + 33, 20_001}) {
            for (int offset : new int[] {0, 1}) {
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment[] in = new MemorySegment[replicas];
                    for (int r = 0; r < replicas; r++) {
                        in[r] = arena.allocate(2L * (n + offset), 64).asSlice(2L * offset);
                    }
                    for (int i = 0; i < n; i++) {
                        fill(in, i, rnd, bf16);
                    }
                    MemorySegment want = arena.allocate(2L * n, 64);
                    MemorySegment got = arena.allocate(2L * (n + offset), 64).asSlice(2L * offset).fill((byte) 0x5A); // poisoned
                    Object[] kernelArgs = args(want, in, replicas, bf16);
                    try {
                        spec.method().invoke(null, kernelArgs);
                    } catch (InvocationTargetException e) {
                        throw new AssertionError(e.getCause());
                    }
                    assertTrue(spec.jvmFastForm().orElseThrow().run(args(got, in, replicas, bf16)), "the fast form applies");
                    check(want, got, in, n, bf16, "n=" + n + ", offset " + offset);
                    MemorySegment first = arena.allocate(2L * n, 64).copyFrom(in[0]);
                    MemorySegment[] inPlace = in.clone();
                    inPlace[0] = first;
                    assertTrue(spec.jvmFastForm().orElseThrow().run(args(first, inPlace, replicas, bf16)), "the fast form applies in place");
                    check(want, first, in, n, bf16, "in place, n=" + n + ", offset " + offset);
                }
            }
        }
    }

    /**
     * Seven replicas whose exact mean lies a float step and a seventh below or above a tie of the
     * format, or on it (five values of [1, 2) and two smaller ones that bring the sum's last bit to
     * 2^-20, within the lanes' range of magnitudes): the product with the float 1/7 lands within
     * four steps of the tie, where the lanes take the quotient's side of it from the remainder.
     * Odd and even neighbours below the tie (ties to even differ from the side at one of them),
     * both signs, at every place in a vector.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"bf16", "fp16"})
    void sevenJustOffATie(String type) throws Exception {
        Assumptions.assumeTrue(Lanes.available(), "no vector module");
        boolean bf16 = type.equals("bf16");
        int k = 7;
        int n = 4 * JvmFastForms.CHUNK;
        int steps = bf16 ? 128 : 1024; // a format's steps in [1, 2)
        // units of 2^-20: the two smaller values sum to half a step, less one, plus one, or exactly
        int[][] small = bf16 ? new int[][] {{3840, 255}, {3968, 129}, {3840, 256}} : new int[][] {{1535, -1024}, {1537, -1024}, {1536, -1024}};
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] in = new MemorySegment[k];
            for (int r = 0; r < k; r++) {
                in[r] = arena.allocate(2L * n, 64);
            }
            SplittableRandom rnd = new SplittableRandom(77);
            for (int i = 0; i < n; i++) {
                // the mean's neighbours 1 + m/steps and 1 + (m + 1)/steps: its sum in [8, 16), each value below 2
                int m = bf16 ? rnd.nextInt(18, 54) : rnd.nextInt(147, 439);
                int[] pair = small[rnd.nextInt(3)];
                float sign = rnd.nextBoolean() ? 1f : -1f;
                int total = 7 * (steps + m) + 3; // the five values: the sum's whole steps
                for (int r = 0; r < 5; r++) {
                    int share = total / (5 - r);
                    total -= share;
                    in[r].setAtIndex(ValueLayout.JAVA_SHORT, i, bits(sign * share / steps, bf16));
                }
                in[5].setAtIndex(ValueLayout.JAVA_SHORT, i, bits(sign * pair[0] * 0x1p-20f, bf16));
                in[6].setAtIndex(ValueLayout.JAVA_SHORT, i, bits(sign * pair[1] * 0x1p-20f, bf16));
            }
            KernelSpec spec = bf16 ? BuiltinKernels.averageBf16(k) : BuiltinKernels.averageF16(k);
            MemorySegment want = arena.allocate(2L * n, 64);
            MemorySegment got = arena.allocate(2L * n, 64).fill((byte) 0x5A);
            spec.method().invoke(null, args(want, in, k, bf16));
            assertTrue(spec.jvmFastForm().orElseThrow().run(args(got, in, k, bf16)), "the fast form applies");
            check(want, got, in, n, bf16, "seven replicas just off a tie");
        }
    }

    /** The bits of {@code v}, which the format holds exactly. */
    private static short bits(float v, boolean bf16) {
        short b = bf16 ? HalfFloats.floatToBf16(v) : HalfFloats.floatToHalf(v);
        assertEquals(v, bf16 ? HalfFloats.bf16ToFloat(b) : HalfFloats.halfToFloat(b), "exact in the format");
        return b;
    }

    /** {@code got} has {@code want}'s bits, a NaN and a NaN aside. */
    private static void check(MemorySegment want, MemorySegment got, MemorySegment[] in, int n, boolean bf16, String what) {
        for (int i = 0; i < n; i++) {
            short w = want.getAtIndex(ValueLayout.JAVA_SHORT, i);
            short g = got.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i);
            if (w != g && !(isNaN(w, bf16) && isNaN(g, bf16))) {
                StringBuilder inputs = new StringBuilder();
                for (MemorySegment m : in) {
                    inputs.append(' ').append(Integer.toHexString(m.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i) & 0xFFFF));
                }
                assertEquals(Integer.toHexString(w & 0xFFFF), Integer.toHexString(g & 0xFFFF), what + ", element " + i + ", inputs" + inputs);
            }
        }
    }

    private static Object[] args(MemorySegment out, MemorySegment[] in, int replicas, boolean bf16) {
        Object[] a = new Object[replicas + 2];
        a[0] = bf16 ? Bfloat16Array.wrap(out) : HalfArray.wrap(out);
        for (int r = 0; r < replicas; r++) {
            a[r + 1] = bf16 ? Bfloat16Array.wrap(in[r]) : HalfArray.wrap(in[r]);
        }
        a[replicas + 1] = (float) replicas;
        return a;
    }

    /**
     * Element {@code i} of every replica: mostly values of one magnitude (the float lanes' case),
     * then small whole numbers (whose sums divided by 3, 5, 6 or 7 often are ties of the format or
     * lie next to one), zeros of either sign beside other values, subnormals, magnitudes 2^11 apart
     * or more, values of 2^125 and up (bf16), means below fp16's normal range, infinities and NaN.
     */
    private static void fill(MemorySegment[] in, int i, SplittableRandom rnd, boolean bf16) {
        int kind = rnd.nextInt(20);
        if (kind >= 17) {
            nearTie(in, i, rnd, bf16);
            return;
        }
        int scale = bf16 ? rnd.nextInt(-30, 30) : rnd.nextInt(-10, 10);
        for (MemorySegment m : in) {
            short bits;
            if (kind == 4) { // a subnormal
                bits = (short) (rnd.nextInt(1, bf16 ? 0x80 : 0x400) | (rnd.nextBoolean() ? 0x8000 : 0));
            } else if (kind == 8 && bf16) { // 2^125 and up
                bits = (short) (rnd.nextInt(0x7F00, 0x7F80) | (rnd.nextBoolean() ? 0x8000 : 0));
            } else {
                float v = switch (kind) {
                    case 0, 1, 2 -> rnd.nextInt(-600, 600);
                    case 3 -> rnd.nextInt(4) == 0 ? (rnd.nextBoolean() ? 0f : -0f) : (float) rnd.nextGaussian();
                    case 5 -> (float) (rnd.nextGaussian() * Math.scalb(1.0, rnd.nextInt(3) == 0 ? -11 - rnd.nextInt(12) : 0));
                    case 6 -> (float) (rnd.nextGaussian() * (bf16 ? 0x1p126 : 0x1p-13));
                    case 7 -> rnd.nextInt(8) == 0 ? Float.NaN : rnd.nextInt(8) == 0 ? Float.NEGATIVE_INFINITY : Float.POSITIVE_INFINITY;
                    case 8 -> (float) (rnd.nextGaussian() * 30000);
                    default -> (float) (rnd.nextGaussian() * Math.scalb(1.0, scale));
                };
                bits = bf16 ? HalfFloats.floatToBf16(v) : HalfFloats.floatToHalf(v);
            }
            m.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, bits);
        }
    }

    /**
     * Element {@code i} of every replica such that the mean lies on or within a few steps of a
     * point halfway between two values of the format: all but the last near that point, the last
     * what makes the sum {@code k} times it, moved by up to two steps.
     */
    private static void nearTie(MemorySegment[] in, int i, SplittableRandom rnd, boolean bf16) {
        float v = (float) (rnd.nextGaussian() * Math.scalb(1.0, rnd.nextInt(-8, 8)));
        float low = bf16 ? HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(v)) : HalfFloats.halfToFloat(HalfFloats.floatToHalf(v));
        double step = bf16 ? Math.scalb(1.0, Math.getExponent(low) - 7) : Math.ulp(HalfFloats.halfToFloat(HalfFloats.floatToHalf(low)));
        double tie = low + step / 2;
        double sum = 0;
        for (int r = 0; r < in.length; r++) {
            double want = r < in.length - 1 ? tie + (rnd.nextInt(-3, 4) * step) : in.length * tie - sum;
            short bits = bf16 ? HalfFloats.floatToBf16((float) want) : HalfFloats.floatToHalf((float) want);
            if (r == in.length - 1) {
                bits = (short) (bits + rnd.nextInt(-2, 3)); // a neighbour of the same sign and binade, mostly
            }
            sum += bf16 ? HalfFloats.bf16ToFloat(bits) : HalfFloats.halfToFloat(bits);
            in[r].setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, bits);
        }
    }

    private static boolean isNaN(short bits, boolean bf16) {
        return (bits & 0x7FFF) > (bf16 ? 0x7F80 : 0x7C00);
    }
}
