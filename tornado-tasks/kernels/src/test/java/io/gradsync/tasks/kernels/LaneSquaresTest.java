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
     * On random data, whose squares' sums depend on their order, the fp32 and bf16 sums are the
     * bits of their lanes added in a fixed order (each lane's running sums, the four joined as
     * {@code (a0 + a1) + (a2 + a3)}, the lanes from the first, then the elements past the passes),
     * before the JIT compiles them and after: the cpu backend's fused norm adds such sums cell by
     * cell and promises the same bits for the same gradient ({@code HostAverage.sumOfSquaresFast}).
     */
    @ParameterizedTest
    @ValueSource(strings = {"f32", "bf16"})
    void randomDataGivesTheBitsOfAFixedOrderCompiledOrNot(String type) {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are JvmReductionsTest's");
        boolean f32 = type.equals("f32");
        SplittableRandom random = new SplittableRandom(39);
        int lanes = Lanes.width();
        try (Arena arena = Arena.ofConfined()) {
            int[][] ranges = {{0, 1000}, {3, 517}, {1, 64 * lanes + 5}};
            MemorySegment x = arena.allocate(4L * 1100);
            for (int i = 0; i < 1100; i++) {
                float v = (float) random.nextGaussian() * (1 + random.nextInt(1000));
                if (f32) {
                    x.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                } else {
                    x.setAtIndex(ValueLayout.JAVA_SHORT, i, HalfFloats.floatToBf16(v));
                }
            }
            for (int round = 0; round < 20_000; round++) {
                for (int[] r : ranges) {
                    double got = f32 ? Lanes.sumOfSquaresF32(x, r[0], r[1]) : Lanes.sumOfSquaresBf16(x, r[0], r[1]);
                    if (round % 4_999 == 0) { // the first call, then as the JIT goes on
                        double want = inFixedOrder(x, r[0], r[1], lanes, f32);
                        assertEquals(Double.doubleToRawLongBits(want), Double.doubleToRawLongBits(got),
                                type + " [" + r[0] + ", " + r[1] + ") call " + round + ": " + got + ", not " + want);
                    }
                }
            }
        }
    }

    /** The lanes' order of {@link #randomDataGivesTheBitsOfAFixedOrderCompiledOrNot}, in plain Java. */
    private static double inFixedOrder(MemorySegment x, int from, int to, int lanes, boolean f32) {
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

    private static double element(MemorySegment x, int i, boolean f32) {
        return f32 ? x.getAtIndex(ValueLayout.JAVA_FLOAT, i) : HalfFloats.bf16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT, i));
    }
}
