package io.gradsync.tasks.api;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ArraysTest {

    @Test
    void allocatedArraysStartZeroedAndRoundTrip() {
        try (FloatArray f = new FloatArray(5); IntArray i = new IntArray(3); LongArray l = new LongArray(2)) {
            assertArrayEquals(new float[5], f.toArray());
            f.set(4, 2.5f);
            i.set(2, -7);
            l.set(1, Long.MIN_VALUE);
            assertEquals(2.5f, f.get(4));
            assertEquals(-7, i.get(2));
            assertEquals(Long.MIN_VALUE, l.get(1));
            assertEquals(5, f.getSize());
            assertEquals(20, f.segment().byteSize());
            assertEquals(0, f.segment().address() % 64, "64-byte aligned");
        }
    }

    @Test
    void closeFreesOwnMemory() {
        FloatArray f = new FloatArray(4);
        f.close();
        assertFalse(f.segment().scope().isAlive());
        assertThrows(IllegalStateException.class, () -> f.get(0));
    }

    @Test
    void wrapViewsForeignMemoryAndDoesNotFreeIt() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(16, 8);
            seg.setAtIndex(ValueLayout.JAVA_FLOAT, 1, 3f);
            FloatArray view = FloatArray.wrap(seg);
            assertEquals(4, view.getSize());
            assertEquals(3f, view.get(1));
            view.set(2, 9f);
            assertEquals(9f, seg.getAtIndex(ValueLayout.JAVA_FLOAT, 2));
            view.close();
            assertTrue(seg.scope().isAlive(), "a view must not free foreign memory");
            Bfloat16Array b = Bfloat16Array.wrap(seg.asSlice(0, 6));
            assertEquals(3, b.getSize());
            assertThrows(IllegalArgumentException.class, () -> FloatArray.wrap(seg.asSlice(0, 6)));
            assertThrows(IllegalArgumentException.class, () -> IntArray.wrap(seg.asSlice(2, 8)));
        }
    }

    @Test
    void outOfBoundsIsAnError() {
        try (FloatArray f = new FloatArray(2)) {
            assertThrows(IndexOutOfBoundsException.class, () -> f.get(2));
            assertThrows(IndexOutOfBoundsException.class, () -> f.set(-1, 0f));
        }
    }

    @Test
    void sixteenBitArraysConvert() {
        try (HalfArray h = HalfArray.of(1f, 65504f, 1e6f, 0x1p-24f); Bfloat16Array b = Bfloat16Array.of(1f, 3.0e38f, 1f / 3f)) {
            assertEquals(1f, h.get(0));
            assertEquals(65504f, h.get(1));
            assertEquals(Float.POSITIVE_INFINITY, h.get(2), "fp16 overflow");
            assertEquals(0x1p-24f, h.get(3), "smallest fp16 subnormal");
            assertEquals((short) 0x3C00, h.getBits(0));
            assertEquals(1f, b.get(0));
            assertEquals((short) 0x3EAB, b.getBits(2), "1/3 rounds up to 0x3EAB");
            h.setBits(0, (short) 0xC000);
            assertEquals(-2f, h.get(0));
        }
    }

    @Test
    void bf16RoundsToNearestEven() {
        // ties: low half exactly 0x8000 rounds to the even neighbour
        assertEquals((short) 0x3F80, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3F80_8000)));
        assertEquals((short) 0x3F82, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3F81_8000)));
        assertEquals((short) 0x3F81, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3F80_8001)));
        assertEquals((short) 0x3F81, HalfFloats.floatToBf16(Float.intBitsToFloat(0x3F81_7FFF)));
        assertEquals((short) 0x7F80, HalfFloats.floatToBf16(Float.intBitsToFloat(0x7F7F_8000)), "rounds up to infinity");
        assertEquals((short) 0x8000, HalfFloats.floatToBf16(-0f));
        assertTrue(Float.isNaN(HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(Float.intBitsToFloat(0x7F80_0001)))), "signalling NaN stays NaN");
        // a NaN is cut and made quiet, never rounded: rounding 0x7FFF_FFFF up would carry into the sign
        for (int nan : new int[] {0x7F80_0001, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x7FC0_0000, 0xFF80_8000, 0x7FBF_FFFF}) {
            assertEquals((short) ((nan >>> 16) | 0x0040), HalfFloats.floatToBf16(Float.intBitsToFloat(nan)), Integer.toHexString(nan));
        }
        assertEquals((short) 0xFF80, HalfFloats.floatToBf16(Float.NEGATIVE_INFINITY));
        assertEquals((short) 0x7F80, HalfFloats.floatToBf16(Float.POSITIVE_INFINITY));
    }

    @Test
    void bf16IsTheNearestOfItsTwoNeighbours() {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int k = 0; k < 200_000; k++) {
            float f = Float.intBitsToFloat(rnd.nextInt());
            if (Float.isNaN(f) || Float.isInfinite(f)) {
                continue;
            }
            int bits = Float.floatToRawIntBits(f);
            float down = Float.intBitsToFloat(bits & 0xFFFF_0000);
            float up = Float.intBitsToFloat((bits & 0xFFFF_0000) + 0x1_0000); // may be infinity: overflow
            double upMagnitude = Math.abs((double) down) + 65536.0 * Math.ulp(down); // exact, even past MAX_VALUE
            float r = HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(f));
            double dd = Math.abs(Math.abs((double) f) - Math.abs((double) down));
            double du = Math.abs(upMagnitude - Math.abs((double) f));
            float expected = dd < du ? down : du < dd ? up : ((bits >>> 16) & 1) == 0 ? down : up;
            assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(r), () -> "bf16 of " + f);
        }
    }

    @Test
    void every16BitPatternWidensExactlyAndNarrowsBack() {
        for (int b = 0; b < 65536; b++) {
            short s = (short) b;
            float bf = HalfFloats.bf16ToFloat(s);
            float hf = HalfFloats.halfToFloat(s);
            if (!Float.isNaN(bf)) {
                assertEquals(s, HalfFloats.floatToBf16(bf));
            }
            if (!Float.isNaN(hf)) {
                assertEquals(s, HalfFloats.floatToHalf(hf));
            }
        }
    }

    @Test
    void atomicAddsFromManyThreadsAreAllCounted() {
        try (FloatArray sum = new FloatArray(1); IntArray count = new IntArray(1)) {
            IntStream.range(0, 100_000).parallel().forEach(i -> {
                Atomics.add(sum, 0, 0.5f);
                Atomics.add(count, 0, 1);
            });
            assertEquals(50_000f, sum.get(0));
            assertEquals(100_000, count.get(0));
            assertThrows(IndexOutOfBoundsException.class, () -> Atomics.add(sum, 1, 1f));
        }
    }

    @Test
    void kernelContextCoordinates() {
        KernelContext ctx = new KernelContext(512, 128);
        ctx.moveTo(300);
        assertEquals(300, ctx.globalIdx());
        assertEquals(44, ctx.localIdx());
        assertEquals(2, ctx.groupIdx());
        assertEquals(128, ctx.localSize());
        assertEquals(512, ctx.globalSize());
        assertThrows(IndexOutOfBoundsException.class, () -> ctx.moveTo(512));
    }
}
