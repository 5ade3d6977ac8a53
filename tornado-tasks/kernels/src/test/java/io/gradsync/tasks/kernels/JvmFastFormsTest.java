package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.SixteenBitFloatArray;
import io.gradsync.tasks.kernels.internal.JvmKernels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The JVM fast forms give the kernel's own bits, on every input. */
class JvmFastFormsTest {
    private static final int CHUNK = JvmFastForms.CHUNK;

    static Stream<KernelSpec> fastKernels() {
        return BuiltinKernels.all().stream().filter(s -> s.style() != io.gradsync.tasks.compiler.KernelStyle.CONTEXT && s.forms().contains(KernelSpec.Form.JVM_FAST));
    }

    @Test
    void theAveragesAndThe16BitElementwiseKernelsHaveFastForms() {
        List<String> names = fastKernels().map(KernelSpec::name).toList();
        for (int k = 2; k <= 8; k++) {
            assertTrue(names.contains("average" + k + "Bf16") && names.contains("average" + k + "F16"), "average" + k);
            assertTrue(names.contains("average" + k), "average" + k);
        }
        for (String n : List.of("sumIntoBf16", "sumIntoF16", "scaleBf16", "copy", "copyBf16", "copyF16")) {
            assertTrue(names.contains(n), n);
        }
    }

    /** The fp32 averages' forms below run in SIMD lanes where the JVM has the vector module (the build's test.argLine adds it). */
    @Test
    void lanesRunWhereTheVectorModuleIs() {
        org.junit.jupiter.api.Assumptions.assumeTrue(ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent(),
                "this JVM runs without --add-modules jdk.incubator.vector: the plain forms are what is checked");
        assertTrue(io.gradsync.tasks.kernels.internal.Lanes.available(), "the vector module is loaded but the averages have no lanes");
    }

    /**
     * Lengths around chunk boundaries, odd and even, and slices that start at odd elements; the
     * longest is shared by the cores, a slice each.
     */
    @ParameterizedTest
    @MethodSource("fastKernels")
    void sameBitsAsTheKernel(KernelSpec spec) throws Exception {
        SplittableRandom rnd = new SplittableRandom(spec.name().hashCode());
        for (int n : new int[] {CHUNK, CHUNK + 1, 3 * CHUNK - 1, 4 * CHUNK + 7, 50_001, 3 * JvmFastForms.SPREAD_CHUNK + 1001}) {
            for (int offset : new int[] {0, 1}) {
                for (float k : scalars(spec, rnd)) {
                    compare(spec, n, offset, k, rnd);
                }
            }
        }
    }

    /** Every 16-bit pattern in the first input, next to random patterns. */
    @ParameterizedTest
    @MethodSource("fastKernels")
    void every16BitValue(KernelSpec spec) throws Exception {
        if (spec.method().getParameterTypes()[0] == FloatArray.class) {
            return;
        }
        SplittableRandom rnd = new SplittableRandom(7);
        try (Arena arena = Arena.ofConfined()) {
            Object[] a = arguments(spec, arena, 65536, 0, 0, rnd);
            MemorySegment first = ((KernelArray) a[spec.name().startsWith("average") || spec.name().startsWith("copy") ? 1 : 0]).segment();
            for (int i = 0; i < 65536; i++) {
                first.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) i);
            }
            for (float k : scalars(spec, rnd)) {
                runBoth(spec, a, k, rnd);
            }
        }
    }

    /**
     * The fused step to odd and bf16 rounding is the two steps, for floats around every kind of tie
     * and every kind of difference that the averages of bf16 replicas leave: a NaN is quiet with its
     * low 16 bits zero, and only an infinity or a NaN is off by NaN.
     */
    @Test
    void bf16OfNearIsToOddThenRounding() {
        SplittableRandom rnd = new SplittableRandom(13);
        float[] errs = {0f, -0f, 1f, -1f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, 3e-30f, -7e20f};
        int[] lows = {0, 1, 0x7FFE, 0x7FFF, 0x8000, 0x8001, 0x8002, 0xFFFE, 0xFFFF};
        for (int i = 0; i < 200_000; i++) {
            int high = rnd.nextInt() & 0xFFFF_0000;
            int near = i % 4 == 0 ? rnd.nextInt() : high | lows[rnd.nextInt(lows.length)];
            if (i % 50 == 0) {
                near = (rnd.nextBoolean() ? 0 : 0x8000_0000) | (rnd.nextBoolean() ? 0x7F80_0000 : 0x7F80_0000 | rnd.nextInt(1, 1 << 23));
            }
            if (Float.isNaN(Float.intBitsToFloat(near))) {
                near = near & 0xFFFF_0000 | 0x0040_0000; // as arithmetic leaves a NaN made from bf16 values: quiet, its low bits zero
            }
            int err = Float.floatToRawIntBits(i % 3 == 0 ? Float.intBitsToFloat(rnd.nextInt()) : errs[rnd.nextInt(errs.length)]);
            float e = Float.intBitsToFloat(err);
            if (Float.isNaN(e) && Float.isFinite(Float.intBitsToFloat(near))) {
                continue; // a finite float is off by a number
            }
            if (Float.isInfinite(Float.intBitsToFloat(near)) && e != 0 && !Float.isNaN(e) && (err ^ near) >= 0) {
                continue; // no quotient lies beyond an infinity
            }
            if (Float.isNaN(Float.intBitsToFloat(near)) && !Float.isNaN(e)) {
                continue; // a NaN quotient is off by NaN
            }
            assertEquals(HalfFloats.bf16InHighHalf(AverageJvmForm.toOdd(near, err)) & 0xFFFF_0000,
                    AverageJvmForm.bf16OfNear(near, err) & 0xFFFF_0000,
                    "near 0x" + Integer.toHexString(near) + " err 0x" + Integer.toHexString(err));
        }
    }

    /** Sums of floats as the averages make them: edge values, then sums of two to eight random floats of any bits. */
    @Test
    void roundToOddOnDoublesMatchesHalfFloats() {
        SplittableRandom rnd = new SplittableRandom(11);
        List<Double> values = new ArrayList<>();
        for (double d : new double[] {0, Double.POSITIVE_INFINITY, Double.NaN, Float.MAX_VALUE, (double) Float.MAX_VALUE + Float.MAX_VALUE,
                8.0 * Float.MAX_VALUE, (double) Float.MAX_VALUE + Math.ulp(Float.MAX_VALUE) / 2, 0x1p-149, 3 * 0x1p-149, 0x1p-126, 0x1p-133,
                0x1p24 + 0x1p-149, 1 + 0x1p-52, 3 * (1 + 0x1p-23), 7 * (1 + 0x1p-23) + 0x1p-40}) {
            values.add(d);
            values.add(-d);
        }
        for (int i = 0; i < 400_000; i++) {
            double sum = 0;
            int scale = rnd.nextInt(-150, 128); // one magnitude for all the replicas (cancellation, near ties), or any bits
            for (int j = 0, n = rnd.nextInt(2, 9); j < n; j++) {
                float v = switch (i % 3) {
                    case 0 -> Float.intBitsToFloat(rnd.nextInt());
                    case 1 -> Math.scalb((float) rnd.nextGaussian(), scale);
                    default -> Math.scalb((float) rnd.nextInt(-4096, 4097), scale - 12); // few bits: exact quotients and ties
                };
                sum += v;
            }
            values.add(sum);
        }
        JvmFastForms.Chunk c = new JvmFastForms.Chunk();
        for (double k : new double[] {1, 2, 0.25, 3, 7, -5, 0x1p-100, 1e30}) {
            for (int from = 0; from < values.size(); from += CHUNK) {
                int count = Math.min(CHUNK, values.size() - from);
                for (int i = 0; i < count; i++) {
                    c.acc[i] = values.get(from + i);
                }
                Arrays.fill(c.f, -0f); // the sum is acc[i] + f[i]: acc[i] itself, -0 too
                AverageJvmForm.divideToNearest(c, k, AverageJvmForm.Sum.ACC);
                AverageJvmForm.roundToOdd(c);
                for (int i = 0; i < count; i++) {
                    double d = values.get(from + i);
                    float want = HalfFloats.roundToOdd(d / k);
                    int got = c.bits[i];
                    // a NaN whose payload a float cannot hold (no sum of floats makes one) only stays a NaN
                    if (Double.isNaN(d) && (Double.doubleToRawLongBits(d) & 0x1FFF_FFFFL) != 0) {
                        assertTrue(Float.isNaN(Float.intBitsToFloat(got)));
                    } else {
                        assertEquals(Float.floatToRawIntBits(want), got, () -> d + " / " + k);
                    }
                }
            }
        }
    }

    /**
     * The averages of two 16-bit replicas by 2, which take float steps: pairs of every exponent
     * distance and sign, with few or many significant bits (exact sums, ties, sums just off a
     * tie), subnormals and the largest values among them.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"average2Bf16", "average2F16"})
    void halvesOfTwoReplicasAtEveryDistance(String name) throws Exception {
        KernelSpec spec = BuiltinKernels.byName(name).orElseThrow();
        boolean bf16 = name.endsWith("Bf16");
        SplittableRandom rnd = new SplittableRandom(17);
        int n = 1 << 17;
        try (Arena arena = Arena.ofConfined()) {
            Object[] a = arguments(spec, arena, n, 0, 2f, rnd);
            SixteenBitFloatArray x = (SixteenBitFloatArray) a[1];
            SixteenBitFloatArray y = (SixteenBitFloatArray) a[2];
            for (int i = 0; i < n; i++) {
                float big = switch (i % 4) {
                    case 0 -> (float) rnd.nextGaussian();
                    case 1 -> Math.scalb((float) rnd.nextInt(1, 16), rnd.nextInt(-40, 30)); // few bits
                    case 2 -> bf16 ? Math.scalb((float) rnd.nextDouble(1, 2), rnd.nextInt(-133, 128)) : 65504f - rnd.nextInt(0, 64) * 32f;
                    default -> Math.scalb((float) rnd.nextDouble(1, 2), bf16 ? -126 : -14); // the smallest normals
                };
                int distance = i % 53;
                float small = Math.scalb((float) (rnd.nextBoolean() ? rnd.nextDouble(1, 2) : rnd.nextInt(1, 8)), Math.getExponent(big) - distance);
                x.set(i, big);
                y.set(i, rnd.nextBoolean() ? small : -small);
            }
            runBoth(spec, a, 2f, rnd);
        }
    }

    /**
     * Slices are whole chunks between the shortest slice and {@code SPREAD_CHUNK}, at least four a
     * core where the array is long enough for that, and {@code SPREAD_CHUNK} where it has more.
     */
    @Test
    void slicesShareTheCoresEvenly() {
        for (int cores : new int[] {1, 2, 16, 64}) {
            for (int n : new int[] {2 * JvmFastForms.SPREAD_CHUNK, 3 * JvmFastForms.SPREAD_CHUNK + 1001, 1 << 22, (1 << 22) + 7, 1 << 26, Integer.MAX_VALUE}) {
                int length = JvmFastForms.sliceLength(n, cores);
                String where = n + " elements on " + cores + " cores: " + length;
                assertEquals(0, length % CHUNK, where);
                assertTrue(length >= JvmFastForms.SHORTEST_SLICE && length <= JvmFastForms.SPREAD_CHUNK, where);
                int slices = n / length;
                if ((long) n >= 4L * cores * JvmFastForms.SHORTEST_SLICE + 4L * cores * CHUNK) {
                    assertTrue(slices >= 4 * cores, where);
                }
                if ((long) n >= 4L * cores * (JvmFastForms.SPREAD_CHUNK + CHUNK)) {
                    assertEquals(JvmFastForms.SPREAD_CHUNK, length, where);
                }
            }
        }
    }

    /** Long arrays of a confined arena, which other threads may not touch: the form runs on the caller's thread. */
    @Test
    void confinedArraysStayOnTheCallersThread() throws Exception {
        KernelSpec spec = BuiltinKernels.averageBf16(3);
        int n = 3 * JvmFastForms.SPREAD_CHUNK + 5;
        SplittableRandom rnd = new SplittableRandom(17);
        try (Arena arena = Arena.ofConfined()) {
            Object[] a = arguments(spec, arena, n, 0, 3f, rnd);
            Object[] b = arguments(spec, arena, n, 0, 3f, rnd);
            for (int i = 1; i < a.length - 1; i++) {
                ((KernelArray) b[i]).segment().copyFrom(((KernelArray) a[i]).segment());
            }
            spec.method().invoke(null, a);
            assertTrue(spec.jvmFastForm().orElseThrow().run(b), "the form took the confined arrays");
            assertEquals(-1, firstDifference((KernelArray) a[0], ((KernelArray) a[0]).segment(), ((KernelArray) b[0]).segment()));
        }
    }

    @Test
    void multiplyingByTheExactReciprocalIsDividing() {
        SplittableRandom rnd = new SplittableRandom(5);
        for (double k : new double[] {1, 2, 8, 0.5, -4, 0x1p-149, 0x1p127}) {
            double r = AverageJvmForm.exactReciprocal(k);
            assertTrue(r != 0, "power of two " + k);
            for (int i = 0; i < 100_000; i++) {
                double x = Double.longBitsToDouble(rnd.nextLong());
                assertEquals(Double.doubleToRawLongBits(x / k), Double.doubleToRawLongBits(x * r), () -> x + " / " + k);
            }
        }
        for (double k : new double[] {3, 0.1, 0, -0.0, Double.POSITIVE_INFINITY, Double.NaN, Math.nextUp(2.0)}) {
            assertEquals(0, AverageJvmForm.exactReciprocal(k), "not a power of two: " + k);
        }
    }

    @Test
    void overlappingShortOrReadOnlyArraysRunTheKernel() throws Exception {
        KernelSpec spec = BuiltinKernels.averageBf16(2);
        JvmFastForm form = spec.jvmFastForm().orElseThrow();
        try (Arena arena = Arena.ofConfined()) {
            int n = 2 * CHUNK;
            MemorySegment m = arena.allocate(2L * (n + 1));
            Bfloat16Array shifted = Bfloat16Array.wrap(m.asSlice(2, 2L * n));
            Bfloat16Array a = Bfloat16Array.wrap(m.asSlice(0, 2L * n));
            Bfloat16Array b = Bfloat16Array.wrap(arena.allocate(2L * n));
            assertFalse(form.run(new Object[] {shifted, a, b, 2f}), "output overlapping an input elsewhere");
            assertTrue(form.run(new Object[] {a, a, b, 2f}), "output that is an input");
            Bfloat16Array small = Bfloat16Array.wrap(arena.allocate(2L * (CHUNK - 1)));
            assertFalse(form.run(new Object[] {small, small, small, 2f}), "shorter than a chunk");
            Bfloat16Array readOnly = Bfloat16Array.wrap(arena.allocate(2L * n).asReadOnly());
            assertFalse(form.run(new Object[] {readOnly, a, b, 2f}), "read-only output");
        }
        // through JvmKernels, the kernel's bits either way: by the form, and by the kernel where the output overlaps
        SplittableRandom rnd = new SplittableRandom(3);
        for (int shift : new int[] {0, 2}) {
            try (Arena arena = Arena.ofConfined()) {
                int n = 3 * CHUNK;
                MemorySegment one = arena.allocate(2L * (n + 1));
                MemorySegment two = arena.allocate(2L * (n + 1));
                fill(one, rnd);
                MemorySegment.copy(one, 0, two, 0, one.byteSize());
                Bfloat16Array other = Bfloat16Array.wrap(arena.allocate(2L * n));
                fill(other.segment(), rnd);
                JvmKernels.run(spec, 1, 1, Bfloat16Array.wrap(one.asSlice(shift, 2L * n)), Bfloat16Array.wrap(one.asSlice(0, 2L * n)), other, 2f);
                spec.method().invoke(null, Bfloat16Array.wrap(two.asSlice(shift, 2L * n)), Bfloat16Array.wrap(two.asSlice(0, 2L * n)), other, 2f);
                // NaN payloads aside: which NaN operand an add passes on is up to the compiled code
                assertEquals(-1, firstDifference(Bfloat16Array.wrap(one), one, two), "output shifted by " + shift + " bytes");
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    /** The scalar arguments to try: the replica count and others for averages (powers of two or not, tiny, huge). */
    private static float[] scalars(KernelSpec spec, SplittableRandom rnd) {
        if (spec.name().startsWith("average")) {
            int replicas = spec.method().getParameterCount() - (spec.name().startsWith("averageInPlace") ? 1 : 2);
            return new float[] {replicas, 3, 2, 0.5f, -7, 0x1p-100f, 1e30f, 0f};
        }
        if (spec.name().startsWith("scale")) {
            return new float[] {0.999f, 2, 1e-3f, 3e38f, -1.5f};
        }
        return new float[] {Float.NaN}; // no scalar
    }

    /** Kernel and fast form on the same random arguments, {@code n} elements in slices {@code offset} elements in. */
    private static void compare(KernelSpec spec, int n, int offset, float k, SplittableRandom rnd) throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            runBoth(spec, arguments(spec, arena, n, offset, k, rnd), k, rnd);
        }
    }

    /**
     * Runs the kernel and the fast form on copies of {@code a} (outputs poisoned alike), and compares
     * every array; the form's copies are shared memory, which long arrays share among the cores.
     */
    private static void runBoth(KernelSpec spec, Object[] a, float k, SplittableRandom rnd) throws Exception {
        Method m = spec.method();
        try (Arena arena = Arena.ofShared()) {
            Object[] b = new Object[a.length];
            for (int i = 0; i < a.length; i++) {
                if (a[i] instanceof KernelArray x) {
                    if (i == 0 && !inPlace(spec)) {
                        fill(x.segment(), rnd); // poisoned output
                    }
                    // another alignment than the kernel's copy: 16-bit arrays then start mid-word
                    MemorySegment copy = arena.allocate(x.segment().byteSize() + x.elementBytes(), 8)
                            .asSlice(x.elementBytes(), x.segment().byteSize());
                    copy.copyFrom(x.segment());
                    b[i] = wrap(x, copy);
                } else {
                    a[i] = k;
                    b[i] = k;
                }
            }
            try {
                m.invoke(null, a);
            } catch (InvocationTargetException e) {
                throw new AssertionError(e.getCause());
            }
            assertTrue(spec.jvmFastForm().orElseThrow().run(b), spec.name() + " took its fast form");
            for (int i = 0; i < a.length; i++) {
                if (a[i] instanceof KernelArray x) {
                    int arg = i;
                    long at = firstDifference(x, x.segment(), ((KernelArray) b[i]).segment());
                    assertEquals(-1, at, () -> spec.name() + " k=" + k + " n=" + x.getSize() + ": argument " + arg + ", element " + at
                            + ": kernel " + hex(x, a, arg, at) + ", fast form " + hex(x, b, arg, at));
                }
            }
        }
    }

    /** The first element whose bits differ, a NaN and a NaN aside (payloads are not part of any result), or -1. */
    private static long firstDifference(KernelArray like, MemorySegment want, MemorySegment got) {
        long at = want.mismatch(got);
        if (at < 0) {
            return -1;
        }
        int bytes = like.elementBytes();
        for (long i = at / bytes; i < like.getSize(); i++) {
            int w = bits(like, want, i);
            int g = bits(like, got, i);
            if (w != g && !(isNaN(like, w) && isNaN(like, g))) {
                return i;
            }
        }
        return -1;
    }

    private static int bits(KernelArray like, MemorySegment s, long i) {
        return like instanceof FloatArray ? s.get(ValueLayout.JAVA_INT_UNALIGNED, 4 * i) : s.get(ValueLayout.JAVA_SHORT_UNALIGNED, 2 * i) & 0xFFFF;
    }

    private static boolean isNaN(KernelArray like, int bits) {
        return switch (like) {
            case FloatArray x -> Float.isNaN(Float.intBitsToFloat(bits));
            case HalfArray x -> (bits & 0x7FFF) > 0x7C00;
            default -> (bits & 0x7FFF) > 0x7F80;
        };
    }

    private static String hex(KernelArray like, Object[] args, int arg, long i) {
        return Integer.toHexString(bits(like, ((KernelArray) args[arg]).segment(), i));
    }

    private static boolean inPlace(KernelSpec spec) {
        return spec.name().startsWith("sumInto") || spec.name().startsWith("scale");
    }

    /** Random arguments: full-length arrays as slices {@code offset} elements into larger memory. */
    private static Object[] arguments(KernelSpec spec, Arena arena, int n, int offset, float k, SplittableRandom rnd) {
        Class<?>[] types = spec.method().getParameterTypes();
        Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            if (types[i] == float.class) {
                args[i] = k;
                continue;
            }
            int bytes = types[i] == FloatArray.class ? 4 : 2;
            MemorySegment s = arena.allocate((long) bytes * (n + offset), 8).asSlice((long) bytes * offset, (long) bytes * n);
            if (bytes == 4) {
                fillFloats(s, rnd);
            } else {
                fill(s, rnd);
            }
            args[i] = types[i] == FloatArray.class ? FloatArray.wrap(s) : types[i] == HalfArray.class ? HalfArray.wrap(s) : Bfloat16Array.wrap(s);
        }
        return args;
    }

    /** Any bits: every 16-bit pattern (NaNs, infinities, subnormals) is as likely. */
    private static void fill(MemorySegment s, SplittableRandom rnd) {
        for (long i = 0; i + 1 < s.byteSize(); i += 2) {
            s.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) rnd.nextInt());
        }
    }

    /** Floats: gradient-like mostly, then any bits, near-overflow values, and values whose sums tie in bf16 / fp16. */
    private static void fillFloats(MemorySegment s, SplittableRandom rnd) {
        for (long i = 0; i < s.byteSize() / 4; i++) {
            float v = switch (rnd.nextInt(8)) {
                case 0 -> Float.intBitsToFloat(rnd.nextInt());
                case 1 -> (rnd.nextBoolean() ? 1 : -1) * Float.MAX_VALUE * (float) rnd.nextDouble(0.5, 1);
                case 2 -> Float.intBitsToFloat(rnd.nextInt() & 0x807F_FFFF); // subnormal or zero
                case 3 -> Float.intBitsToFloat((rnd.nextInt() & 0xFFFF_8000) | 0x0000_8000); // a bf16 tie
                default -> (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(-4, 3)));
            };
            s.set(ValueLayout.JAVA_FLOAT_UNALIGNED, 4 * i, v);
        }
    }

    private static KernelArray wrap(KernelArray like, MemorySegment s) {
        return switch (like) {
            case FloatArray x -> FloatArray.wrap(s);
            case HalfArray x -> HalfArray.wrap(s);
            case Bfloat16Array x -> Bfloat16Array.wrap(s);
            default -> throw new IllegalArgumentException(like.getClass().getName());
        };
    }

}
