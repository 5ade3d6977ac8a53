package io.gradsync.tasks.api;

/**
 * Conversions between {@code float} and the two 16-bit storage formats of gradients.
 *
 * <p>bf16 keeps float's 8-bit exponent and cuts the mantissa to 7 bits; fp16 (IEEE binary16) has a
 * 5-bit exponent and 10-bit mantissa. Narrowing rounds to nearest, ties to even, exactly as the
 * GPU's {@code cvt.rn} instructions do, so a kernel gives the same bits on the JVM and on a device
 * (NaN payloads aside: any NaN stays a NaN). The kernel compiler maps these methods to device
 * instructions.
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
public final class HalfFloats {
    private HalfFloats() {
    }

    /** Widens bf16 bits to the float they denote (exact). */
    public static float bf16ToFloat(short bits) {
        return Float.intBitsToFloat(bits << 16); // the sign extension shifts out
    }

    /** Rounds a float to the nearest bf16 (ties to even); NaN stays a quiet NaN. */
    public static short floatToBf16(float value) {
        return (short) (bf16InHighHalf(Float.floatToRawIntBits(value)) >>> 16);
    }

    /**
     * The bf16 nearest the float with these bits (ties to even; a NaN made quiet), in the upper 16
     * bits. Branch-free, so a loop over an int array of it vectorizes: the host's bulk narrowing
     * uses it directly on float bits.
     */
    public static int bf16InHighHalf(int floatBits) {
        int nan = (0x7F80_0000 - (floatBits & 0x7FFF_FFFF)) >> 31; // all ones where the magnitude is above infinity's
        int bias = (0x7FFF + ((floatBits >>> 16) & 1)) & ~nan;     // a NaN is cut, not rounded: no carry into the sign
        return (floatBits + bias) | (nan & 0x0040_0000);
    }

    /**
     * {@code d} rounded to a float by round-to-odd: exact where {@code d} is a float, else whichever
     * of the two floats around it has an odd last bit. Rounding that float once more, to nearest-even
     * in a format of at most 22 significant bits (bf16, fp16), gives {@code d} rounded to that format
     * directly, with one rounding; {@code (float) d} instead would round twice. In kernels the compiler
     * writes it as the device's conversion toward zero, and where its float goes straight into a
     * bf16 or fp16 store, as that store's one rounding of {@code d}: the same bits. NaN stays NaN.
     */
    public static float roundToOdd(double d) {
        float f = (float) d; // nearest, ties to even
        long have = Double.doubleToRawLongBits((double) f) & 0x7FFF_FFFF_FFFF_FFFFL;
        long want = Double.doubleToRawLongBits(d) & 0x7FFF_FFFF_FFFF_FFFFL;
        long diff = have ^ want;
        int inexact = (int) ((diff | -diff) >>> 63);
        int away = (int) ((have - want) >>> 63); // |f| < |d|: the odd neighbour is the larger magnitude
        int bits = Float.floatToRawIntBits(f);
        int step = inexact & ~bits & 1;          // only an inexact, even result moves
        return Float.intBitsToFloat(bits + step * (2 * away - 1));
    }

    /** Widens IEEE binary16 bits to the float they denote (exact). */
    public static float halfToFloat(short bits) {
        return Float.float16ToFloat(bits);
    }

    /** Rounds a float to the nearest IEEE binary16 (ties to even), overflowing to infinity. */
    public static short floatToHalf(float value) {
        return Float.floatToFloat16(value);
    }
}
