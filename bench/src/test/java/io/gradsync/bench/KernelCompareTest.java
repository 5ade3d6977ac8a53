package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gradsync.tasks.compiler.ir.ElementKind;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The comparison's check: bit for bit, except that a NaN matches any NaN (no form pins a payload down). */
class KernelCompareTest {
    private static KernelCompare.Arg array(ElementKind kind, int count) {
        return new KernelCompare.Arg(null, kind, count, true, null);
    }

    @Test
    void aNanMatchesAnyNanAndNothingElse() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment expected = arena.allocate(16);
            MemorySegment actual = arena.allocate(16);
            float[] e = {Float.NaN, 1f, Float.intBitsToFloat(0x7fc00001), 2f};
            float[] a = {Float.intBitsToFloat(0xffc00000), 1f, 3f, Float.NaN};
            for (int i = 0; i < 4; i++) {
                expected.setAtIndex(ValueLayout.JAVA_FLOAT, i, e[i]);
                actual.setAtIndex(ValueLayout.JAVA_FLOAT, i, a[i]);
            }
            // element 0: two NaNs with different payloads and signs match; 2 and 3: a NaN against a number does not
            assertEquals(2, KernelCompare.differences(array(ElementKind.F32, 4), expected, actual, false));
        }
    }

    @Test
    void sixteenBitNansMatchByTheirOwnExponents() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment expected = arena.allocate(8);
            MemorySegment actual = arena.allocate(8);
            short[] e = {(short) 0x7e00, (short) 0x7c00, (short) 0x7fc0, (short) 0x7f80};
            short[] a = {(short) 0xfe01, (short) 0x7c01, (short) 0xffc1, (short) 0x7f81};
            for (int i = 0; i < 4; i++) {
                expected.setAtIndex(ValueLayout.JAVA_SHORT, i, e[i]);
                actual.setAtIndex(ValueLayout.JAVA_SHORT, i, a[i]);
            }
            // fp16: 0x7e00 and 0xfe01 are NaNs; 0x7c00 is infinity, not a NaN. bf16 likewise with 0x7f80
            assertEquals(1, KernelCompare.differences(array(ElementKind.F16, 2), expected.asSlice(0, 4), actual.asSlice(0, 4), false));
            assertEquals(1, KernelCompare.differences(array(ElementKind.BF16, 2), expected.asSlice(4, 4), actual.asSlice(4, 4), false));
        }
    }
}
