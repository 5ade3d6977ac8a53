package io.gradsync.tasks.kernels.internal;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The division-free quotient against Java's own division, on sums of floats of every magnitude. */
class QuotientsTest {

    @Test
    void sameDoubleAsTheDivisionForSumsOfFloats() {
        SplittableRandom rnd = new SplittableRandom(11);
        for (int k = 1; k <= 70; k++) {
            double r = 1.0 / k;
            for (int i = 0; i < 20_000; i++) {
                double sum = sumOfFloats(rnd, 1 + rnd.nextInt(8));
                double want = sum / k;
                double got = Quotients.byCount(sum, k, r);
                int kk = k;
                assertEquals(Double.doubleToRawLongBits(want), Double.doubleToRawLongBits(got), () -> sum + " / " + kk);
            }
        }
        for (double k : new double[] {3, 7, 1 << 20}) {
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(Quotients.byCount(-0.0, k, 1 / k)), "-0 keeps its sign");
            assertEquals(Double.doubleToRawLongBits(0.0), Double.doubleToRawLongBits(Quotients.byCount(0.0, k, 1 / k)));
            assertTrue(Double.isNaN(Quotients.byCount(Double.POSITIVE_INFINITY, k, 1 / k)), "an infinite sum gives NaN, as documented");
            assertTrue(Double.isNaN(Quotients.byCount(Double.NaN, k, 1 / k)));
        }
    }

    @Test
    void divideGivesTheDivisionsBitsForEveryFloatDivisor() {
        SplittableRandom rnd = new SplittableRandom(13);
        for (int i = 0; i < 3_000_000; i++) {
            float k = switch (rnd.nextInt(4)) {
                case 0 -> rnd.nextInt(1, 1 << 20);
                case 1 -> (float) rnd.nextDouble(0.5, 64);
                default -> Float.intBitsToFloat(rnd.nextInt()); // any bits: tiny, huge, negative, subnormal
            };
            if (Float.isNaN(k) || Float.isInfinite(k) || k == 0) {
                continue;
            }
            assertSameAsDivision(sumOfFloats(rnd, 1 + rnd.nextInt(8)), k);
        }
        float[] divisors = {1, 2, 3, 7, -3, 0.1f, Float.MIN_VALUE, Float.MAX_VALUE, 0f, -0f, Float.POSITIVE_INFINITY,
                Float.NEGATIVE_INFINITY, Float.NaN};
        double[] sums = {0.0, -0.0, 1.0, -5.5, Float.MIN_VALUE, 8.0 * Float.MAX_VALUE, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, Double.NaN};
        for (float k : divisors) {
            for (double sum : sums) {
                assertSameAsDivision(sum, k);
            }
        }
    }

    private static void assertSameAsDivision(double sum, float k) {
        double want = sum / k;
        double got = Quotients.divide(sum, k, 1.0 / k);
        if (Double.isNaN(want)) {
            assertTrue(Double.isNaN(got), () -> sum + " / " + k + " gave " + got);
        } else {
            assertEquals(Double.doubleToRawLongBits(want), Double.doubleToRawLongBits(got), () -> sum + " / " + k);
        }
    }

    @Test
    void wholeCountsOnly() {
        assertTrue(Quotients.isWholeCount(1) && Quotients.isWholeCount(3) && Quotients.isWholeCount(1 << 20));
        for (double k : new double[] {0, 0.5, 2.5, -3, (1 << 20) + 1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertFalse(Quotients.isWholeCount(k), "k=" + k);
        }
    }

    /** Floats of random bits, of one magnitude with few or many bits, or near the largest float. */
    private static double sumOfFloats(SplittableRandom rnd, int terms) {
        int exponent = rnd.nextInt(-149, 100); // the scaled cases below stay finite
        double sum = 0;
        for (int t = 0; t < terms; t++) {
            float f = switch (rnd.nextInt(4)) {
                case 0 -> Float.intBitsToFloat(rnd.nextInt() & 0xFF7F_FFFF); // any finite bits
                case 1 -> (float) Math.scalb(rnd.nextDouble(-2, 2), exponent + rnd.nextInt(-3, 4));
                case 2 -> (float) Math.scalb((double) rnd.nextInt(-100_000, 100_000), exponent);
                default -> Float.MAX_VALUE * (float) rnd.nextDouble(-1, 1);
            };
            sum += f;
        }
        return sum;
    }
}
