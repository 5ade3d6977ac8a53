package io.gradsync.tasks.compiler.frontend;

/**
 * Java's {@code %} on float and double (JLS 15.17.3: the remainder of the division truncated
 * toward zero, which is exact), written in the kernel subset so that the compiler inlines it
 * where a device has no such instruction: the significands are divided by shifts and
 * subtractions, one bit of the quotient per step, and the remainder is put back together with
 * the smaller exponent. The remainder is exact, so every step is in integers and no rounding
 * happens anywhere.
 */
final class JavaRemainder {
    private JavaRemainder() {
    }

    static double remainder(double x, double y) {
        long bx = Double.doubleToRawLongBits(x);
        long by = Double.doubleToRawLongBits(y);
        long magX = bx & 0x7fffffffffffffffL;
        long magY = by & 0x7fffffffffffffffL;
        if (magY == 0 || magX >= 0x7ff0000000000000L || magY > 0x7ff0000000000000L) {
            return Double.NaN; // x infinite or NaN, y zero or NaN
        }
        if (magX < magY) {
            return x; // |x| < |y|, y possibly infinite
        }
        long sign = bx & 0x8000000000000000L;
        // both as m * 2^e with the leading bit of m at position 52, subnormals included (e may go below 1)
        int ex = (int) (magX >>> 52);
        int ey = (int) (magY >>> 52);
        long mx = ex == 0 ? magX : (magX & 0xfffffffffffffL) | (1L << 52);
        long my = ey == 0 ? magY : (magY & 0xfffffffffffffL) | (1L << 52);
        ex = ex == 0 ? 1 : ex;
        ey = ey == 0 ? 1 : ey;
        while (mx < (1L << 52)) {
            mx <<= 1;
            ex--;
        }
        while (my < (1L << 52)) {
            my <<= 1;
            ey--;
        }
        // (mx * 2^(ex - ey)) mod my, one bit of the exponent difference per step: r stays below 2 my
        long r = mx;
        for (int e = ex; e > ey; e--) {
            if (r >= my) {
                r -= my;
            }
            r <<= 1;
        }
        if (r >= my) {
            r -= my;
        }
        if (r == 0) {
            return Double.longBitsToDouble(sign);
        }
        int e = ey;
        while (r < (1L << 52)) {
            r <<= 1;
            e--;
        }
        // the remainder is representable: going subnormal drops only zero bits
        long bits = e >= 1 ? ((long) e << 52) | (r & 0xfffffffffffffL) : r >>> (1 - e);
        return Double.longBitsToDouble(bits | sign);
    }

    static float remainder(float x, float y) {
        int bx = Float.floatToRawIntBits(x);
        int by = Float.floatToRawIntBits(y);
        int magX = bx & 0x7fffffff;
        int magY = by & 0x7fffffff;
        if (magY == 0 || magX >= 0x7f800000 || magY > 0x7f800000) {
            return Float.NaN;
        }
        if (magX < magY) {
            return x;
        }
        int sign = bx & 0x80000000;
        int ex = magX >>> 23;
        int ey = magY >>> 23;
        int mx = ex == 0 ? magX : (magX & 0x7fffff) | (1 << 23);
        int my = ey == 0 ? magY : (magY & 0x7fffff) | (1 << 23);
        ex = ex == 0 ? 1 : ex;
        ey = ey == 0 ? 1 : ey;
        while (mx < (1 << 23)) {
            mx <<= 1;
            ex--;
        }
        while (my < (1 << 23)) {
            my <<= 1;
            ey--;
        }
        int r = mx;
        for (int e = ex; e > ey; e--) {
            if (r >= my) {
                r -= my;
            }
            r <<= 1;
        }
        if (r >= my) {
            r -= my;
        }
        if (r == 0) {
            return Float.intBitsToFloat(sign);
        }
        int e = ey;
        while (r < (1 << 23)) {
            r <<= 1;
            e--;
        }
        int bits = e >= 1 ? (e << 23) | (r & 0x7fffff) : r >>> (1 - e);
        return Float.intBitsToFloat(bits | sign);
    }
}
