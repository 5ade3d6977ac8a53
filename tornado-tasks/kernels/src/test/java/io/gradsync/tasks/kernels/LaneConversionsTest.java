package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.kernels.internal.Lanes;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The fp32/bf16 conversions in lanes at every count around their steps, on segments of exactly the
 * count's size (a step's whole-vector read must stop at the input's end) and with a poisoned guard
 * after the output (a step's whole-vector store must stay within the count), against
 * {@link HalfFloats} element by element.
 */
class LaneConversionsTest {
    private static final short POISON16 = (short) 0x7FC1;
    private static final int POISON32 = 0x7FC0_0DEF;
    private static final int GUARD = 64; // elements after the output

    @Test
    void toBf16WritesEachElementsNearestAndNothingPastTheCount() {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are JvmFastFormsTest's");
        SplittableRandom random = new SplittableRandom(27);
        for (int n = 0; n <= 200; n++) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment in = arena.allocate(4L * n);
                MemorySegment out = arena.allocate(2L * (n + GUARD));
                for (int i = 0; i < n; i++) {
                    in.setAtIndex(ValueLayout.JAVA_INT, i, random.nextInt());
                }
                for (int i = 0; i < n + GUARD; i++) {
                    out.setAtIndex(ValueLayout.JAVA_SHORT, i, POISON16);
                }
                Lanes.f32ToBf16(in, out, n);
                for (int i = 0; i < n; i++) {
                    float f = in.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                    assertEquals(HalfFloats.floatToBf16(f), out.getAtIndex(ValueLayout.JAVA_SHORT, i), "n " + n + ", element " + i);
                }
                for (int i = n; i < n + GUARD; i++) {
                    assertEquals(POISON16, out.getAtIndex(ValueLayout.JAVA_SHORT, i), "n " + n + ": written past the count at " + i);
                }
            }
        }
    }

    @Test
    void fromBf16WritesEachElementsFloatReadingNoFurtherThanTheInput() {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are JvmFastFormsTest's");
        SplittableRandom random = new SplittableRandom(28);
        for (int n = 0; n <= 200; n++) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment in = arena.allocate(2L * n);
                MemorySegment out = arena.allocate(4L * (n + GUARD));
                for (int i = 0; i < n; i++) {
                    in.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) random.nextInt());
                }
                for (int i = 0; i < n + GUARD; i++) {
                    out.setAtIndex(ValueLayout.JAVA_INT, i, POISON32);
                }
                Lanes.bf16ToF32(in, out, n);
                for (int i = 0; i < n; i++) {
                    int expected = Float.floatToRawIntBits(HalfFloats.bf16ToFloat(in.getAtIndex(ValueLayout.JAVA_SHORT, i)));
                    assertEquals(expected, out.getAtIndex(ValueLayout.JAVA_INT, i), "n " + n + ", element " + i);
                }
                for (int i = n; i < n + GUARD; i++) {
                    assertEquals(POISON32, out.getAtIndex(ValueLayout.JAVA_INT, i), "n " + n + ": written past the count at " + i);
                }
            }
        }
    }
}
