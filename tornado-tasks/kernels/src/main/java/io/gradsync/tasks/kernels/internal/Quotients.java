package io.gradsync.tasks.kernels.internal;

/**
 * A sum of replicas divided by the replica count without a division instruction, which costs a
 * vector loop several times what a multiply does (and a GPU a slow multi-instruction sequence per
 * element): the very bits of {@code sum / k} in float64, for the averages' kernels, their JVM forms
 * and the host average alike.
 *
 * <p>Thread-safety: stateless.
 */
public final class Quotients {
    /** The largest count taken: replica counts are far below it. */
    private static final double MAX_COUNT = 0x1p20;

    private Quotients() {
    }

    /** Whether {@link #byCount} takes {@code k}: a whole number from 1 to 2^20. */
    public static boolean isWholeCount(double k) {
        return k >= 1 && k <= MAX_COUNT && k == Math.rint(k);
    }

    /**
     * {@code sum / k} rounded once to float64, as the division rounds it, for a whole {@code k}
     * ({@link #isWholeCount}), {@code r = 1 / k}, and a finite {@code sum} of floats (a multiple of
     * 2^-149, or zero of either sign); an infinite or NaN {@code sum} gives NaN. The product with
     * the rounded reciprocal is within an ulp of the quotient, its remainder {@code sum - q k} is
     * exact as an fma, and one correction step by the reciprocal then rounds to the quotient's own
     * double (Markstein's theorem: no underflow is possible for such sums). Written negated, so that
     * a zero sum keeps its sign.
     */
    public static double byCount(double sum, double k, double r) {
        double q = sum * r;
        double remainder = Math.fma(-q, k, sum);
        return -Math.fma(-remainder, r, -q);
    }

    /**
     * {@code sum / k} with the division's own bits for any float {@code k} and {@code r = 1.0 / k}:
     * the averages' kernels divide this way. For a finite {@code sum} of floats (a multiple of
     * 2^-149 below 2^1000), {@link #byCount}'s step: a float divisor has 24 significant bits, so
     * the quotient is never closer than about 2^-27 of an ulp to a point halfway between two
     * doubles, far more than the corrected product's error (a few 2^-53 of an ulp), and no step can
     * underflow. Where the remainder is zero the product {@code sum * r} is exact (a zero sum keeps
     * the sign the division gives it), and where it is NaN (an infinite or NaN sum, a zero or
     * infinite {@code k}) the product is the quotient too: both take the product. Branch-free, so a
     * kernel stays straight-line code.
     */
    public static double divide(double sum, float k, double r) {
        double q = sum * r;
        double remainder = Math.fma(-q, k, sum);
        double corrected = Math.fma(remainder, r, q);
        long magnitude = Double.doubleToRawLongBits(remainder) & Long.MAX_VALUE;
        // all ones where the remainder is zero or NaN (its magnitude's bits above infinity's)
        long product = (magnitude - 1) >> 63 | (0x7FF0_0000_0000_0000L - magnitude) >> 63;
        return Double.longBitsToDouble(Double.doubleToRawLongBits(corrected) & ~product | Double.doubleToRawLongBits(q) & product);
    }
}
