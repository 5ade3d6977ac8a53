package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.kernels.internal.Lanes;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.InvocationTargetException;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The averages of 3 to 8 bf16 replicas by their count, whose JVM form adds them in float lanes
 * where that gives the kernel's bits and does the other elements one at a time: gradient-like
 * replicas (the float lanes' case) with every kind of element that must leave them, against the
 * kernel's own Java body, bit for bit. {@link JvmFastFormsTest} covers random bit patterns, where
 * the float lanes seldom apply.
 */
class Bf16AveragesInLanesTest {

    @ParameterizedTest(name = "{0} replicas")
    @ValueSource(ints = {3, 4, 5, 6, 7, 8})
    void sameBitsAsTheKernel(int replicas) throws Exception {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the form's plain loops are what JvmFastFormsTest checks");
        KernelSpec spec = BuiltinKernels.averageBf16(replicas);
        SplittableRandom rnd = new SplittableRandom(replicas * 7919L);
        int chunk = JvmFastForms.CHUNK; // shorter arrays run the kernel itself
        for (int n : new int[] {chunk, chunk + 31, 4 * chunk + 33, 20_001}) {
            for (int offset : new int[] {0, 1}) {
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment[] in = new MemorySegment[replicas];
                    for (int r = 0; r < replicas; r++) {
                        in[r] = arena.allocate(2L * (n + offset), 64).asSlice(2L * offset);
                    }
                    for (int i = 0; i < n; i++) {
                        fill(in, i, rnd);
                    }
                    MemorySegment want = arena.allocate(2L * n, 64);
                    MemorySegment got = arena.allocate(2L * (n + offset), 64).asSlice(2L * offset).fill((byte) 0x5A); // poisoned
                    Object[] kernelArgs = args(want, in, replicas);
                    try {
                        spec.method().invoke(null, kernelArgs);
                    } catch (InvocationTargetException e) {
                        throw new AssertionError(e.getCause());
                    }
                    assertTrue(spec.jvmFastForm().orElseThrow().run(args(got, in, replicas)), "the fast form applies");
                    check(want, got, in, n, "n=" + n + ", offset " + offset);
                    MemorySegment first = arena.allocate(2L * n, 64).copyFrom(in[0]);
                    MemorySegment[] inPlace = in.clone();
                    inPlace[0] = first;
                    assertTrue(spec.jvmFastForm().orElseThrow().run(args(first, inPlace, replicas)), "the fast form applies in place");
                    check(want, first, in, n, "in place, n=" + n + ", offset " + offset);
                }
            }
        }
    }

    /** {@code got} has {@code want}'s bits, a NaN and a NaN aside. */
    private static void check(MemorySegment want, MemorySegment got, MemorySegment[] in, int n, String what) {
        for (int i = 0; i < n; i++) {
            short w = want.getAtIndex(ValueLayout.JAVA_SHORT, i);
            short g = got.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i);
            if (w != g && !(isNaN(w) && isNaN(g))) {
                StringBuilder inputs = new StringBuilder();
                for (MemorySegment m : in) {
                    inputs.append(' ').append(Integer.toHexString(m.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i) & 0xFFFF));
                }
                assertEquals(Integer.toHexString(w & 0xFFFF), Integer.toHexString(g & 0xFFFF), what + ", element " + i + ", inputs" + inputs);
            }
        }
    }

    private static Object[] args(MemorySegment out, MemorySegment[] in, int replicas) {
        Object[] a = new Object[replicas + 2];
        a[0] = Bfloat16Array.wrap(out);
        for (int r = 0; r < replicas; r++) {
            a[r + 1] = Bfloat16Array.wrap(in[r]);
        }
        a[replicas + 1] = (float) replicas;
        return a;
    }

    /**
     * Element {@code i} of every replica: mostly values of one magnitude (the float lanes' case),
     * then small whole numbers (whose sums divided by 3, 5, 6 or 7 often are ties of bf16 or lie
     * next to one), zeros of either sign beside other values, subnormals, magnitudes 2^14 apart or
     * more, values of 2^125 and up, infinities and NaN.
     */
    private static void fill(MemorySegment[] in, int i, SplittableRandom rnd) {
        int kind = rnd.nextInt(20);
        int scale = rnd.nextInt(-30, 30);
        for (MemorySegment m : in) {
            float v = switch (kind) {
                case 0, 1, 2 -> rnd.nextInt(-600, 600);
                case 3 -> rnd.nextInt(4) == 0 ? (rnd.nextBoolean() ? 0f : -0f) : (float) rnd.nextGaussian();
                case 4 -> Float.intBitsToFloat((rnd.nextInt(1, 0x80) | (rnd.nextBoolean() ? 0x8000 : 0)) << 16); // subnormal
                case 5 -> (float) (rnd.nextGaussian() * Math.scalb(1.0, rnd.nextInt(3) == 0 ? -14 - rnd.nextInt(20) : 0));
                case 6 -> (float) (rnd.nextGaussian() * 0x1p126);
                case 7 -> rnd.nextInt(8) == 0 ? Float.NaN : rnd.nextInt(8) == 0 ? Float.NEGATIVE_INFINITY : Float.POSITIVE_INFINITY;
                case 8 -> Float.intBitsToFloat((rnd.nextInt(0x7F00, 0x7F80) | (rnd.nextBoolean() ? 0x8000 : 0)) << 16); // 2^125 and up
                default -> (float) (rnd.nextGaussian() * Math.scalb(1.0, scale));
            };
            m.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, HalfFloats.floatToBf16(v));
        }
    }

    private static boolean isNaN(short bits) {
        return (bits & 0x7FFF) > 0x7F80;
    }
}
