package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.kernels.internal.Lanes;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The sums of squares in lanes over every range of up to 300 elements around their passes, single
 * vectors and single elements, from several starts: small integers, whose squares' sums are exact
 * in any order, so that an element missed, added twice or read from outside the range shows as a
 * different sum. Elements outside the range hold other integers.
 */
class LaneSquaresTest {
    @ParameterizedTest
    @ValueSource(strings = {"f32", "bf16", "f16"})
    void everyElementOfTheRangeOnceAndNoOther(String type) {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are JvmReductionsTest's");
        SplittableRandom random = new SplittableRandom(28);
        int bytes = type.equals("f32") ? 4 : 2;
        for (int from : new int[] {0, 1, 8, 13}) {
            for (int n = 0; n <= 300; n++) {
                try (Arena arena = Arena.ofConfined()) {
                    int size = from + n + 40;
                    MemorySegment x = arena.allocate((long) bytes * size);
                    double exact = 0;
                    for (int i = 0; i < size; i++) {
                        int v = random.nextInt(-15, 16);
                        if (i >= from && i < from + n) {
                            exact += (double) v * v;
                        } else {
                            v = 100 + random.nextInt(50); // never counted
                        }
                        switch (type) {
                            case "f32" -> x.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                            case "bf16" -> x.setAtIndex(ValueLayout.JAVA_SHORT, i, HalfFloats.floatToBf16(v));
                            default -> x.setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(v));
                        }
                    }
                    double got = switch (type) {
                        case "f32" -> Lanes.sumOfSquaresF32(x, from, from + n);
                        case "bf16" -> Lanes.sumOfSquaresBf16(x, from, from + n);
                        default -> Lanes.sumOfSquaresF16(x, from, from + n);
                    };
                    assertEquals(exact, got, type + ": elements [" + from + ", " + (from + n) + ")");
                }
            }
        }
    }

    /**
     * Every 16-bit pattern, 64 of it (a whole number of passes, and single elements after): its
     * square 64 times, exact in any order, so each value's float64 in the lanes is its own,
     * subnormals and the largest included; an infinity makes the sum infinite, a NaN NaN, in
     * either half of a word lane's element pair.
     */
    @ParameterizedTest
    @ValueSource(strings = {"bf16", "f16"})
    void everyBitPattern(String type) {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are JvmReductionsTest's");
        boolean bf16 = type.equals("bf16");
        try (Arena arena = Arena.ofConfined()) {
            int n = 67;
            MemorySegment x = arena.allocate(2L * n);
            for (int bits = 0; bits < 0x10000; bits++) {
                short h = (short) bits;
                double v = bf16 ? HalfFloats.bf16ToFloat(h) : Float.float16ToFloat(h);
                x.fill((byte) 0);
                for (int i = 0; i < 64; i++) {
                    x.setAtIndex(ValueLayout.JAVA_SHORT, i, h);
                }
                double want = 64 * (v * v);
                double got = bf16 ? Lanes.sumOfSquaresBf16(x, 0, 64) : Lanes.sumOfSquaresF16(x, 0, 64);
                assertEquals(want, got, type + " bits 0x" + Integer.toHexString(bits));
                x.setAtIndex(ValueLayout.JAVA_SHORT, 65, h); // alone, after the passes: as the pair's other half
                x.setAtIndex(ValueLayout.JAVA_SHORT, 0, (short) 0);
                double one = bf16 ? Lanes.sumOfSquaresBf16(x, 1, 66) : Lanes.sumOfSquaresF16(x, 1, 66);
                assertEquals(64 * (v * v), one, type + " bits 0x" + Integer.toHexString(bits) + " from 1");
            }
        }
    }

    /**
     * On random data, whose squares' sums depend on their order, the sums are the bits of their
     * lanes added in a fixed order (each lane's running sums joined as {@code (a0 + a1) + (a2 + a3)},
     * fp16's two sets of four as {@code (that) + (that)}, the lanes from the first, then the elements
     * past the passes), on the first calls and after C2 has compiled them: the cpu backend's fused
     * norm adds such sums cell by cell and promises the same bits for the same gradient
     * ({@code HostAverage.sumOfSquaresFast}). Many data sets and ranges, because one range's lanes
     * added in another order give the same bits often: C2's own order for {@code reduceLanes(ADD)}
     * differed from the lanes' order on about one 1,024-element sum in five.
     */
    @ParameterizedTest
    @ValueSource(strings = {"f32", "bf16", "f16"})
    void randomDataGivesTheBitsOfAFixedOrderCompiledOrNot(String type) {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are JvmReductionsTest's");
        SplittableRandom random = new SplittableRandom(40);
        int lanes = Lanes.width();
        int sets = 48;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] data = new MemorySegment[sets];
            int[][] ranges = new int[sets][];
            for (int d = 0; d < sets; d++) {
                int from = random.nextInt(17);
                int to = from + random.nextInt(1500);
                ranges[d] = new int[] {from, to};
                data[d] = arena.allocate(4L * (to + 64));
                for (int i = 0; i < to + 64; i++) {
                    // magnitudes 2^-12 to 2^6 apart from element to element: the float64 sums of
                    // their squares round, so that another order shows (within one scale the
                    // 16-bit squares' sums were exact, and every order gave the same bits)
                    float v = (float) random.nextGaussian() * Math.scalb(1f, random.nextInt(-12, 7));
                    switch (type) {
                        case "f32" -> data[d].setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                        case "bf16" -> data[d].setAtIndex(ValueLayout.JAVA_SHORT, i, HalfFloats.floatToBf16(v));
                        default -> data[d].setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(v));
                    }
                }
            }
            assertEveryRangeInFixedOrder(type, data, ranges, lanes, "first calls");
            for (int call = 0; call < 40_000; call++) { // C2 compiles the sums (and the call sites) meanwhile
                int d = call % sets;
                sum(type, data[d], ranges[d][0], ranges[d][1]);
            }
            assertEveryRangeInFixedOrder(type, data, ranges, lanes, "after 40,000 calls");
        }
    }

    private static void assertEveryRangeInFixedOrder(String type, MemorySegment[] data, int[][] ranges, int lanes, String when) {
        for (int d = 0; d < data.length; d++) {
            int from = ranges[d][0];
            int to = ranges[d][1];
            double want = inFixedOrder(type, data[d], from, to, lanes);
            double got = sum(type, data[d], from, to);
            assertEquals(Double.doubleToRawLongBits(want), Double.doubleToRawLongBits(got),
                    type + " set " + d + " [" + from + ", " + to + "), " + when + ": " + got + ", not " + want);
        }
    }

    private static double sum(String type, MemorySegment x, int from, int to) {
        return switch (type) {
            case "f32" -> Lanes.sumOfSquaresF32(x, from, to);
            case "bf16" -> Lanes.sumOfSquaresBf16(x, from, to);
            default -> Lanes.sumOfSquaresF16(x, from, to);
        };
    }

    /** The lanes' order of {@link #randomDataGivesTheBitsOfAFixedOrderCompiledOrNot}, in plain Java. */
    private static double inFixedOrder(String type, MemorySegment x, int from, int to, int lanes) {
        if (type.equals("f16")) {
            return f16InFixedOrder(x, from, to, lanes);
        }
        boolean f32 = type.equals("f32");
        int pass = 4 * lanes;
        int beyond = f32 ? lanes : 2 * lanes; // how far a pass's last vector reads past it
        int room = to - from - beyond;
        int end = room < 0 ? from : from + room / pass * pass;
        double[][] a = new double[4][lanes];
        for (int i = from; i < end; i += pass) {
            for (int l = 0; l < lanes; l++) {
                for (int j = 0; j < 4; j++) {
                    // fp32: vector j holds elements i + j * lanes + l; bf16: words of two, the low
                    // halves in sums 0 and 2, the high ones in 1 and 3
                    int e = f32 ? i + j * lanes + l : i + (j / 2) * 2 * lanes + 2 * l + j % 2;
                    double v = element(x, e, f32);
                    a[j][l] += v * v;
                }
            }
        }
        double sum = 0;
        for (int l = 0; l < lanes; l++) {
            sum += (a[0][l] + a[1][l]) + (a[2][l] + a[3][l]);
        }
        for (int i = end; i < to; i++) {
            double v = element(x, i, f32);
            sum += v * v;
        }
        return sum;
    }

    /**
     * fp16's order: passes of {@code 4 * lanes} elements, words of two; vector 0 the low halves of
     * the pass's first {@code lanes} words, 1 their high halves, 2 and 3 the same of the next
     * {@code lanes} words; even and odd passes in two sets of running sums, the last pass's set
     * joined second; each value taken times 2^-112 and the lanes' sum times 2^224.
     */
    private static double f16InFixedOrder(MemorySegment x, int from, int to, int lanes) {
        int pass = 4 * lanes;
        int end = to - (to - from) % pass;
        double[][][] chains = new double[2][4][lanes];
        int passes = (end - from) / pass;
        for (int p = 0; p < passes; p++) {
            int i = from + p * pass;
            for (int j = 0; j < 4; j++) {
                for (int l = 0; l < lanes; l++) {
                    int e = i + (j / 2) * 2 * lanes + 2 * l + j % 2;
                    double v = Math.abs(Float.float16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT, e))) * 0x1p-112;
                    chains[p % 2][j][l] = Math.fma(v, v, chains[p % 2][j][l]);
                }
            }
        }
        double[][] last = chains[(passes + 1) % 2]; // a4..a7: the last pass's set (nothing when no pass ran)
        double[][] other = chains[passes % 2];
        double sum = 0;
        for (int l = 0; l < lanes; l++) {
            sum += ((other[0][l] + other[1][l]) + (other[2][l] + other[3][l])) + ((last[0][l] + last[1][l]) + (last[2][l] + last[3][l]));
        }
        sum *= 0x1p224;
        for (int i = end; i < to; i++) {
            double v = Float.float16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT, i));
            sum += v * v;
        }
        return sum;
    }

    private static double element(MemorySegment x, int i, boolean f32) {
        return f32 ? x.getAtIndex(ValueLayout.JAVA_FLOAT, i) : HalfFloats.bf16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT, i));
    }
}
