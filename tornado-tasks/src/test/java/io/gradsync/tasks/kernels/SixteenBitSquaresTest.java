package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.HalfFloats;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The float products the 16-bit sums of squares use are the exact fp64 squares, for every 16-bit value. */
class SixteenBitSquaresTest {
    @Test
    void everyBf16AndFp16SquareIsExact() {
        for (int bits = 0; bits < 1 << 16; bits++) {
            float b = HalfFloats.bf16ToFloat((short) bits);
            assertEquals(Double.doubleToRawLongBits((double) b * b), Double.doubleToRawLongBits(GradientKernels.square16(b, true)),
                    "bf16 0x" + Integer.toHexString(bits));
            float h = HalfFloats.halfToFloat((short) bits);
            assertEquals(Double.doubleToRawLongBits((double) h * h), Double.doubleToRawLongBits(GradientKernels.square16(h, false)),
                    "fp16 0x" + Integer.toHexString(bits));
        }
    }
}
