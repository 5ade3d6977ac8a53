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
