package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The comparison's check: bit for bit, except that a NaN matches any NaN (no form pins a payload down). */
class KernelCompareTest {
    private static KernelCompare.Arg array(ElementKind kind, int count) {
        return new KernelCompare.Arg(null, kind, count, true, null);
    }

    @Test
    void trafficCountsWhatAPerfectKernelReadsAndWritesPartialsIncluded() {
        int n = 1 << 20;
        KernelSpec average3 = BuiltinKernels.byName("average3").orElseThrow();
        assertEquals(4L * n * 4, KernelCompare.traffic(average3, KernelCompare.arguments(average3, n))); // three read, one written
        KernelSpec scale = BuiltinKernels.byName("scaleBf16").orElseThrow();
        assertEquals(2L * n * 2, KernelCompare.traffic(scale, KernelCompare.arguments(scale, n))); // in place: read and written
        KernelSpec partials = BuiltinKernels.byName("sumOfSquaresPartialsF16").orElseThrow();
        // the input read, every fp64 slot written: the slots do not shrink with the input
        assertEquals(2L * n + 8L * BuiltinKernels.REDUCTION_THREADS,
                KernelCompare.traffic(partials, KernelCompare.arguments(partials, n)));
        KernelSpec check = BuiltinKernels.byName("checkFinite").orElseThrow();
        long flag = KernelCompare.traffic(check, KernelCompare.arguments(check, n)) - 4L * n;
        assertTrue(flag >= 0 && flag <= 8, "the one-element flag adds at most its own bytes read and written: " + flag);
    }

    /** A user's loop up to a scalar covers the arrays, as one up to their length does; other scalars stay as they were. */
    @Test
    void aUsersLoopUpToAScalarGetsTheElementCount() {
        int n = 1 << 12;
        KernelSpec upTo = KernelSelection.select(io.gradsync.cli.UsersKernels.class.getName() + "#momentumUpTo").getFirst();
        List<KernelCompare.Arg> args = KernelCompare.arguments(upTo, n);
        assertEquals(List.of(n, n), args.stream().filter(a -> a.element() != null).map(KernelCompare.Arg::count).toList());
        assertEquals(List.of(0.999f, n), args.stream().filter(a -> a.element() == null).map(KernelCompare.Arg::scalar).toList());
    }

    @Test
    void normalDataHoldsTheMagnitudesTheUniformFillNeverHas() {
        int n = 1 << 16;
        try (Arena arena = Arena.ofConfined()) {
            for (KernelCompare.Values values : KernelCompare.Values.values()) {
                MemorySegment s = arena.allocate(4L * n, 64);
                KernelCompare.fill(array(ElementKind.F32, n), s, 7, values);
                int small = 0, large = 0, negative = 0;
                for (int i = 0; i < n; i++) {
                    float v = s.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                    small += Math.abs(v) < 0.5f ? 1 : 0;
                    large += Math.abs(v) > 1.5f ? 1 : 0;
                    negative += v < 0 ? 1 : 0;
                }
                assertTrue(negative > n / 3 && negative < 2 * n / 3, values + ": both signs, " + negative);
                if (values == KernelCompare.Values.UNIFORM) {
                    assertEquals(0, small + large, "uniform: magnitudes 0.5 to 1.5");
                } else { // a standard normal: 38% below 0.5, 13% above 1.5
                    assertTrue(small > n / 3 && small < 0.43 * n, "normal: below 0.5 " + small);
                    assertTrue(large > n / 10 && large < n / 6, "normal: above 1.5 " + large);
                }
            }
        }
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
