package io.gradsync.tasks.kernels.internal;

/**
 * A sum of replicas divided by the replica count without a division instruction, which costs a
 * vector loop several times what a multiply does: the very bits of {@code sum / k} in float64, for
 * the averages' JVM forms and the host average alike.
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
}
