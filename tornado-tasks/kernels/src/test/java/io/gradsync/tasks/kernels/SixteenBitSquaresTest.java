package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.HalfFloats;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The squares the 16-bit sums of squares take from magnitude bits are the exact fp64 squares, for every finite 16-bit value. */
class SixteenBitSquaresTest {
    @Test
    void everyFiniteBf16AndFp16SquareIsExact() {
        int checked = 0;
        for (int bits = 0; bits < 1 << 16; bits++) {
            float b = HalfFloats.bf16ToFloat((short) bits);
            if (Float.isFinite(b)) {
                assertEquals(Double.doubleToRawLongBits((double) b * b), Double.doubleToRawLongBits(ReductionKernels.square16(bits & 0x7fff, true)),
                        "bf16 0x" + Integer.toHexString(bits));
                checked++;
            }
            float h = HalfFloats.halfToFloat((short) bits);
            if (Float.isFinite(h)) {
                assertEquals(Double.doubleToRawLongBits((double) h * h), Double.doubleToRawLongBits(ReductionKernels.square16(bits & 0x7fff, false)),
                        "fp16 0x" + Integer.toHexString(bits));
                checked++;
            }
        }
        // all but the all-ones exponents: 2 signs x 2^7 bf16 significands, 2 x 2^10 fp16 ones
        assertEquals(((1 << 16) - 2 * 0x80) + ((1 << 16) - 2 * 0x400), checked, "every finite value of both types");
    }
}
