package io.gradsync.sync;

import io.gradsync.sync.internal.HostAverage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.HalfFloats;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import java.util.stream.Stream;

/**
 * The host average against its definition, element by element: widen, add in replica order in
 * float64, divide by the replica count, round once to the element type, the last step done here
 * independently of the code under test (the nearest value of the format, ties to even, found in a
 * table of all its values). Special values included (NaN, infinities, ties, subnormals); only
 * [from, to) is written; the output may be the first input.
 */
class HostAverageTest {

    static Stream<Arguments> cases() {
        return Stream.of(DType.values()).flatMap(t -> Stream.of(1, 2, 3, 4, 5, 8, 9).map(n -> Arguments.of(t, n)));
    }

    @ParameterizedTest(name = "{0}, {1} inputs")
    @MethodSource("cases")
    void averagesAsDefinedAndWritesOnlyTheRange(DType dtype, int replicas) {
        SplittableRandom rnd = new SplittableRandom(dtype.ordinal() * 31L + replicas);
        int count = 5000 + rnd.nextInt(3000); // several blocks and a ragged end
        long from = rnd.nextInt(1500);
        long to = count - rnd.nextInt(1500);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] in = new MemorySegment[replicas];
            for (int r = 0; r < replicas; r++) {
                in[r] = arena.allocate((long) count * dtype.bytes(), 64);
                for (int i = 0; i < count; i++) {
                    put(dtype, in[r], i, value(rnd, i));
                }
            }
            MemorySegment out = arena.allocate((long) count * dtype.bytes(), 64).fill((byte) 0x5A); // poisoned
            MemorySegment before = arena.allocate(out.byteSize()).copyFrom(out);
            // many times, so that what is checked is (likely) the JIT's vector code, as in production
            for (int k = 0; k < 400; k++) {
                HostAverage.average(dtype, in, out, from, to);
            }
            for (int i = 0; i < count; i++) {
                if (i < from || i >= to) {
                    assertEquals(bits(dtype, before, i), bits(dtype, out, i), "element " + i + " lies outside the range");
                    continue;
                }
                double sum = get(dtype, in[0], i);
                for (int r = 1; r < replicas; r++) {
                    sum += get(dtype, in[r], i);
                }
                assertSame(dtype, roundOnce(dtype, sum / replicas), bits(dtype, out, i), "element " + i);
            }
            // in place: the output is the first input
            MemorySegment want = arena.allocate(out.byteSize()).copyFrom(out);
            HostAverage.average(dtype, in, in[0], from, to);
            for (long i = from; i < to; i++) {
                assertSame(dtype, bits(dtype, want, i), bits(dtype, in[0], i), "in place, element " + i);
            }
        }
    }

    static Stream<Arguments> intoAllCases() {
        return Stream.of(DType.values()).flatMap(t -> Stream.of(2, 3, 4, 5, 7, 8, 9).flatMap(n ->
                Stream.of(1, 7, 8, 32, 37, 511, 512, 3000).map(count -> Arguments.of(t, n, count))));
    }

    /**
     * The all-reduce on host memory ({@link HostAverage#averageIntoAll}: SIMD lanes where the vector
     * module is, as in these tests): every input ends with the defined mean on [from, to), and
     * nothing else changes; lengths around the lane count and the forms' chunk.
     */
    @ParameterizedTest(name = "{0}, {1} inputs, {2} elements")
    @MethodSource("intoAllCases")
    void averagesIntoEveryInputAsDefined(DType dtype, int replicas, int count) {
        SplittableRandom rnd = new SplittableRandom(dtype.ordinal() * 131L + replicas * 7L + count);
        int pad = 5;
        int length = count + 2 * pad;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] in = new MemorySegment[replicas];
            MemorySegment[] was = new MemorySegment[replicas];
            for (int r = 0; r < replicas; r++) {
                in[r] = arena.allocate((long) length * dtype.bytes(), 64);
                for (int i = 0; i < length; i++) {
                    put(dtype, in[r], i, value(rnd, i));
                }
                was[r] = arena.allocate(in[r].byteSize()).copyFrom(in[r]);
            }
            // many times over fresh copies, so that what is checked is (likely) the JIT's code
            for (int k = 0; k < 200; k++) {
                for (int r = 0; r < replicas; r++) {
                    in[r].copyFrom(was[r]);
                }
                HostAverage.averageIntoAll(dtype, in, pad, pad + count);
            }
            // the cpu backend's batch of a chunk's short fp32 pieces, here one piece: the same bits
            MemorySegment[] batch = new MemorySegment[replicas];
            boolean batched = dtype == DType.FP32 && count < 512 && io.gradsync.tasks.kernels.internal.Lanes.available();
            if (batched) {
                for (int r = 0; r < replicas; r++) {
                    batch[r] = arena.allocate(was[r].byteSize(), 64).copyFrom(was[r]);
                }
                io.gradsync.tasks.kernels.internal.Lanes.averageFp32Pieces(new MemorySegment[][] {batch}, new long[] {pad},
                        new long[] {pad + count});
            }
            for (int i = 0; i < length; i++) {
                for (int r = 0; r < replicas; r++) {
                    if (batched) {
                        assertSame(dtype, bits(dtype, in[r], i), bits(dtype, batch[r], i), "pieces, replica " + r + ", element " + i);
                    }
                    if (i < pad || i >= pad + count) {
                        assertEquals(bits(dtype, was[r], i), bits(dtype, in[r], i), "replica " + r + ", element " + i + " lies outside the range");
                        continue;
                    }
                    double sum = get(dtype, was[0], i);
                    for (int q = 1; q < replicas; q++) {
                        sum += get(dtype, was[q], i);
                    }
                    assertSame(dtype, roundOnce(dtype, sum / replicas), bits(dtype, in[r], i), "replica " + r + ", element " + i);
                }
            }
        }
    }

    /** Negative zeros in every input average to a negative zero, in lanes and in the few elements past them. */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(DType.class)
    void negativeZerosStayNegative(DType dtype) {
        try (Arena arena = Arena.ofConfined()) {
            for (int count : new int[]{1, 7, 9, 33, 70}) {
                MemorySegment[] in = new MemorySegment[3];
                for (int r = 0; r < in.length; r++) {
                    in[r] = arena.allocate((long) count * dtype.bytes(), 64);
                    for (int i = 0; i < count; i++) {
                        put(dtype, in[r], i, -0.0f);
                    }
                }
                HostAverage.averageIntoAll(dtype, in, 0, count);
                for (MemorySegment m : in) {
                    for (int i = 0; i < count; i++) {
                        assertEquals(dtype == DType.FP32 ? 0x8000_0000 : 0x8000, bits(dtype, m, i), dtype + " element " + i + " of " + count);
                    }
                }
            }
        }
    }

    /** The lanes are what the tests above check, where the JVM has the module (the build's test.argLine adds it). */
    @org.junit.jupiter.api.Test
    void lanesRunWhereTheVectorModuleIs() {
        org.junit.jupiter.api.Assumptions.assumeTrue(ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent(),
                "this JVM runs without --add-modules jdk.incubator.vector: the plain loops are what is checked");
        assertTrue(io.gradsync.tasks.kernels.internal.Lanes.available(), "the vector module is loaded but the averages have no lanes");
    }

    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(DType.class)
    void theMeanOfHugeValuesIsFinite(DType dtype) {
        float huge = switch (dtype) {
            case FP32 -> 3e38f;
            case BF16 -> 3e38f;
            case FP16 -> 60000f;
        };
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] in = new MemorySegment[4];
            for (int r = 0; r < 4; r++) {
                in[r] = arena.allocate(16L * dtype.bytes(), 64);
                for (int i = 0; i < 16; i++) {
                    put(dtype, in[r], i, huge);
                }
            }
            MemorySegment out = arena.allocate(16L * dtype.bytes(), 64);
            HostAverage.average(dtype, in, out, 0, 16);
            for (int i = 0; i < 16; i++) {
                assertEquals(get(dtype, in[0], i), get(dtype, out, i), "the mean of four equal values is that value");
            }
        }
    }

    /**
     * Two replicas whose float sum overflows, beside lanes whose sum is finite and tiny ones whose
     * half rounds: every input ends with the mean (the lanes add two fp32 replicas in float where
     * that sum is finite). 600 elements take the average kernel's form, with one output.
     */
    @org.junit.jupiter.api.Test
    void twoReplicasWhoseFloatSumOverflowsAverageToTheirMean() {
        try (Arena arena = Arena.ofConfined()) {
            for (int count : new int[]{16, 32, 40, 64, 100, 600}) {
                for (int hugeAt : new int[]{-1, 0, count / 2, count - 1}) {
                    MemorySegment[] in = {arena.allocate(4L * count, 64), arena.allocate(4L * count, 64)};
                    float[][] was = new float[2][count];
                    SplittableRandom rnd = new SplittableRandom(count * 31L + hugeAt);
                    for (int i = 0; i < count; i++) {
                        for (int r = 0; r < 2; r++) {
                            float v = i == hugeAt ? (r == 0 ? 3e38f : 2e38f) : i % 3 == 0 ? Float.MIN_VALUE * rnd.nextInt(8)
                                    : (float) rnd.nextGaussian();
                            was[r][i] = v;
                            put(DType.FP32, in[r], i, v);
                        }
                    }
                    MemorySegment[] batch = {arena.allocate(4L * count, 64).copyFrom(in[0]), arena.allocate(4L * count, 64).copyFrom(in[1])};
                    HostAverage.averageIntoAll(DType.FP32, in, 0, count);
                    if (io.gradsync.tasks.kernels.internal.Lanes.available()) { // the cpu backend's batch of short pieces, one piece
                        io.gradsync.tasks.kernels.internal.Lanes.averageFp32Pieces(new MemorySegment[][] {batch}, new long[] {0},
                                new long[] {count});
                    } else {
                        HostAverage.averageIntoAll(DType.FP32, batch, 0, count);
                    }
                    for (int i = 0; i < count; i++) {
                        int want = roundOnce(DType.FP32, ((double) was[0][i] + was[1][i]) / 2);
                        for (int r = 0; r < 2; r++) {
                            assertEquals(want, bits(DType.FP32, in[r], i), "count " + count + ", replica " + r + ", element " + i);
                            assertEquals(want, bits(DType.FP32, batch[r], i), "pieces, count " + count + ", replica " + r + ", element " + i);
                        }
                    }
                }
            }
        }
    }

    /** {@code m} rounded to the nearest value of the format, ties to even: an independent reference. */
    static int roundOnce(DType dtype, double m) {
        if (dtype == DType.FP32) {
            return Float.floatToRawIntBits((float) m); // Java's narrowing is correctly rounded
        }
        if (Double.isNaN(m)) {
            return narrow(dtype, Float.NaN);
        }
        double[] values = TABLES.computeIfAbsent(dtype, HostAverageTest::positiveValues);
        double a = Math.abs(m);
        int at = java.util.Arrays.binarySearch(values, a);
        int code;
        if (at >= 0) {
            code = at;
        } else if (-at - 1 == values.length) {
            code = values.length - 1; // beyond one step past the largest: infinity
        } else {
            int hi = -at - 1;
            int lo = hi - 1;
            double dLo = a - values[lo];
            double dHi = values[hi] - a;
            code = dLo < dHi ? lo : dHi < dLo ? hi : (lo % 2 == 0 ? lo : hi);
        }
        int sign = m < 0 || (m == 0 && 1 / m < 0) ? 0x8000 : 0;
        return sign | code;
    }

    private static final java.util.Map<DType, double[]> TABLES = new java.util.concurrent.ConcurrentHashMap<>();

    /** Every non-negative finite value of the format in code order (= value order), then infinity as the next step. */
    private static double[] positiveValues(DType dtype) {
        int infCode = dtype == DType.BF16 ? 0x7F80 : 0x7C00;
        double[] v = new double[infCode + 1];
        for (int c = 0; c < infCode; c++) {
            v[c] = dtype == DType.BF16 ? HalfFloats.bf16ToFloat((short) c) : HalfFloats.halfToFloat((short) c);
        }
        v[infCode] = v[infCode - 1] + (v[infCode - 1] - v[infCode - 2]); // the largest value plus one step
        return v;
    }

    /** Mostly ordinary values; some NaN, infinities, values on a rounding tie, and subnormals. */
    private static float value(SplittableRandom rnd, int i) {
        return switch (rnd.nextInt(40)) {
            case 0 -> Float.NaN;
            case 1 -> Float.intBitsToFloat(0x7FFF_FFFF); // a NaN whose rounding would carry into the sign
            case 2 -> rnd.nextBoolean() ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY;
            case 3 -> Float.intBitsToFloat(0x3F80_8000 | (rnd.nextInt(128) << 16)); // a bf16 tie
            case 4 -> Float.MIN_VALUE * rnd.nextInt(1000);
            default -> (float) (rnd.nextGaussian() * Math.scalb(1.0, rnd.nextInt(-20, 12)));
        };
    }

    /** The host's quick sum of squares: the kernels' sum within float64 rounding, the same bits every time, NaN and infinity as they say. */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(DType.class)
    void theFastSumOfSquaresIsTheSum(DType dtype) {
        SplittableRandom rnd = new SplittableRandom(dtype.ordinal() + 77L);
        try (Arena arena = Arena.ofConfined()) {
            for (int count : new int[] {0, 1, 7, 31, 32, 33, 1000, 16384, 65536 + 13}) {
                MemorySegment x = arena.allocate(Math.max(1, (long) count * dtype.bytes()), 64);
                io.gradsync.sync.verify.RandomGradients.fill(dtype, x, count, rnd);
                double want = HostAverage.sumOfSquares(dtype, x, count);
                double got = HostAverage.sumOfSquaresFast(dtype, x, count);
                assertEquals(want, got, 1e-12 * want, dtype + " x " + count);
                assertEquals(Double.doubleToRawLongBits(got), Double.doubleToRawLongBits(HostAverage.sumOfSquaresFast(dtype, x, count)));
                if (count > 1) {
                    put(dtype, x, count - 1, Float.POSITIVE_INFINITY);
                    assertEquals(Double.POSITIVE_INFINITY, HostAverage.sumOfSquaresFast(dtype, x, count), dtype + " x " + count);
                    put(dtype, x, count / 2, Float.NaN);
                    assertTrue(Double.isNaN(HostAverage.sumOfSquaresFast(dtype, x, count)), dtype + " x " + count);
                }
            }
        }
    }

    /** Same bits, or both NaN (NaN payloads may differ between the vector and scalar conversions). */
    private static void assertSame(DType dtype, int want, int got, String what) {
        if (dtype != DType.FP32 ? isNaN16(dtype, want) : Float.isNaN(Float.intBitsToFloat(want))) {
            assertTrue(dtype != DType.FP32 ? isNaN16(dtype, got) : Float.isNaN(Float.intBitsToFloat(got)),
                    what + ": a NaN, got " + Integer.toHexString(got));
            return;
        }
        assertEquals(Integer.toHexString(want), Integer.toHexString(got), what);
    }

    private static boolean isNaN16(DType dtype, int bits) {
        return Float.isNaN(dtype == DType.BF16 ? HalfFloats.bf16ToFloat((short) bits) : HalfFloats.halfToFloat((short) bits));
    }

    private static int narrow(DType dtype, float v) {
        return switch (dtype) {
            case FP32 -> Float.floatToRawIntBits(v);
            case BF16 -> HalfFloats.floatToBf16(v) & 0xFFFF;
            case FP16 -> HalfFloats.floatToHalf(v) & 0xFFFF;
        };
    }

    private static void put(DType dtype, MemorySegment s, long i, float v) {
        if (dtype == DType.FP32) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
        } else {
            s.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) narrow(dtype, v));
        }
    }

    private static float get(DType dtype, MemorySegment s, long i) {
        return switch (dtype) {
            case FP32 -> s.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            case BF16 -> HalfFloats.bf16ToFloat(s.getAtIndex(ValueLayout.JAVA_SHORT, i));
            case FP16 -> HalfFloats.halfToFloat(s.getAtIndex(ValueLayout.JAVA_SHORT, i));
        };
    }

    private static int bits(DType dtype, MemorySegment s, long i) {
        return dtype == DType.FP32 ? s.getAtIndex(ValueLayout.JAVA_INT, i) : s.getAtIndex(ValueLayout.JAVA_SHORT, i) & 0xFFFF;
    }
}
