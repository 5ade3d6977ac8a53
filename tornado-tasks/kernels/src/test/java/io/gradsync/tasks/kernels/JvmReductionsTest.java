package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.SixteenBitFloatArray;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.kernels.internal.JvmKernels;
import io.gradsync.tasks.kernels.internal.Lanes;
import io.gradsync.tasks.testing.KernelArgs;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reductions' JVM forms give the kernels' results: run as Java by groups, with the form, compared. */
class JvmReductionsTest {

    private static KernelSpec spec(String name) {
        return BuiltinKernels.byName(name).orElseThrow();
    }

    /** The kernel itself over its launch (not the form), as a device would run it. */
    private static void kernel(KernelSpec spec, int n, Object... args) {
        KernelSpec plain = new KernelSpec(spec.name(), spec.method(), KernelStyle.CONTEXT, spec.maxThreads());
        io.gradsync.tasks.compiler.LaunchShape shape = LaunchShapes.forSpec(plain, n);
        Object[] withCtx = new Object[args.length + 1];
        System.arraycopy(args, 0, withCtx, 1, args.length);
        KernelArgs.runOnJvm(spec.method(), null, withCtx, shape);
    }

    /**
     * Runs partials kernel {@code name} over {@code x} into {@code slots} slots, as the kernel and as
     * its JVM form, both outputs poisoned first; asserts the same bits and returns the form's.
     */
    private static DoubleArray partialsAsTheKernel(String name, KernelArray x, int slots, String what) {
        DoubleArray want = new DoubleArray(slots);
        DoubleArray got = new DoubleArray(slots);
        KernelArgs.poison(want);
        KernelArgs.poison(got);
        kernel(spec(name), slots, x, want);
        JvmKernels.run(spec(name), spec(name).launchShape(slots), x, got);
        assertEquals(-1, KernelArgs.firstDifference(want, got), what);
        return got;
    }

    private static KernelArray input(String name, int n, Random rnd, double nonFinite) {
        Class<?> type = name.endsWith("Bf16") ? Bfloat16Array.class : name.endsWith("F16") ? HalfArray.class : FloatArray.class;
        return KernelArgs.random(type, n, rnd, nonFinite);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sumOfSquaresPartials", "sumOfSquaresPartialsBf16", "sumOfSquaresPartialsF16"})
    void partialsBitForBit(String name) {
        Random rnd = new Random();
        for (int[] c : new int[][] {{1, 1}, {1000, 7}, {70_001, 1024}, {200_003, 3000}, {5000, 6000}, {100_000, 999},
                {1_000_003, 40_000}, // many blocks to a task, whose rows differ by one
                // slots of eight and seven elements, nine and eight, sixteen and fifteen, four and three, the boundary inside a block
                {7 * 4096 + 1501, 4096}, {8 * 2000 + 700, 2000}, {15 * 1024 + 513, 1024}, {3 * 5000 + 1234, 5000},
                // more rows than a step sums at once: the sums carried between chunks of rows, blocks of slots
                {33 * 1024, 1024}, {40 * 1500 + 777, 1500}, {70 * 3000 + 17, 3000}, {96 * 1536 + 700, 1536}, {200 * 40 + 3, 40},
                {64 * 2048 + 1, 2048}}) {
            // NaN and infinities in some slots of a short and of a tall array
            KernelArray x = input(name, c[0], rnd, c[0] == 100_000 || c[1] == 1500 || c[1] == 1536 ? 1e-4 : 0);
            partialsAsTheKernel(name, x, c[1], name + " n=" + c[0] + " slots=" + c[1]);
        }
    }

    /**
     * Partials of an array wrapped around a heap segment (a user's), and into one: the kernels'
     * bits, as from native memory.
     */
    @ParameterizedTest
    @ValueSource(strings = {"sumOfSquaresPartials", "sumOfSquaresPartialsBf16", "sumOfSquaresPartialsF16"})
    void partialsOfHeapArrays(String name) {
        Random rnd = new Random();
        int n = 16 * 4096 + 77;
        KernelArray native_ = input(name, n, rnd, 0);
        long bytes = native_.segment().byteSize();
        java.lang.foreign.MemorySegment onHeap = java.lang.foreign.MemorySegment.ofArray(new long[(int) ((bytes + 7) / 8)]).asSlice(0, bytes);
        onHeap.copyFrom(native_.segment());
        KernelArray x = switch (native_) {
            case FloatArray f -> FloatArray.wrap(onHeap);
            case Bfloat16Array b -> Bfloat16Array.wrap(onHeap);
            default -> HalfArray.wrap(onHeap);
        };
        DoubleArray fromNative = partialsAsTheKernel(name, native_, 4096, name + " native");
        DoubleArray fromHeap = partialsAsTheKernel(name, x, 4096, name + " on the heap");
        assertEquals(-1, KernelArgs.firstDifference(fromNative, fromHeap), name + ": heap and native inputs");
        DoubleArray heapOut = DoubleArray.wrap(java.lang.foreign.MemorySegment.ofArray(new double[4096]));
        KernelArgs.poison(heapOut);
        JvmKernels.run(spec(name), spec(name).launchShape(4096), native_, heapOut);
        assertEquals(-1, KernelArgs.firstDifference(fromNative, heapOut), name + ": into a heap array");
    }

    /**
     * Which of the eight running sums each element goes to, where a block's slots differ in their
     * count: values spread over 2^-14 .. 2^14, so that their squares' sums in fp64 depend on the
     * order (they are exact for most ordinary 16-bit data). The slots to the boundary's left, at an
     * even and an odd place, sum one element more, which goes to its own running sum.
     */
    @ParameterizedTest
    @ValueSource(strings = {"sumOfSquaresPartials", "sumOfSquaresPartialsBf16", "sumOfSquaresPartialsF16"})
    void partialsOrderWhereSlotsDifferInCount(String name) {
        Random rnd = new Random();
        Class<?> type = name.endsWith("Bf16") ? Bfloat16Array.class : name.endsWith("F16") ? HalfArray.class : FloatArray.class;
        int slots = 1024;
        for (int rows : new int[] {3, 8, 9, 16, 17, 31, 32, 33, 40, 41, 47, 48, 49, 57, 64, 71, 72, 73, 130}) {
            for (int boundary : new int[] {512 + 101, 512 + 100}) { // in the second block, at an odd and an even slot
                for (int repeat = 0; repeat < 6; repeat++) {
                    int n = (rows - 1) * slots + boundary;
                    KernelArray x = KernelArgs.allocate(type, n);
                    for (int i = 0; i < n; i++) {
                        KernelArgs.setFloat(x, i, (float) Math.scalb(1 + rnd.nextDouble(), rnd.nextInt(29) - 14));
                    }
                    partialsAsTheKernel(name, x, slots, name + " rows=" + rows + " boundary=" + boundary);
                }
            }
        }
    }

    /**
     * Rows of a multiple of 4 KiB apart, 9 to 31 of them (the whole-row steps, {@code Lanes.crowded}):
     * the order of the running sums as above, with the boundary where slots differ in count before
     * an odd and an even number of whole steps, and in the last step; and an fp16 or bf16 infinity
     * or NaN in one step, whose slots are then the kernel's one by one.
     */
    @ParameterizedTest
    @ValueSource(strings = {"sumOfSquaresPartialsBf16", "sumOfSquaresPartialsF16"})
    void partialsWhereRowsShareACacheSet(String name) {
        Random rnd = new Random();
        Class<?> type = name.endsWith("Bf16") ? Bfloat16Array.class : HalfArray.class;
        for (int slots : new int[] {2048, 4096}) {
            for (int rows : new int[] {9, 12, 16, 17, 24, 31}) {
                for (int boundary : new int[] {53, 16 * 7 + 2, slots - 5}) {
                    int n = (rows - 1) * slots + boundary;
                    KernelArray x = KernelArgs.allocate(type, n);
                    for (int i = 0; i < n; i++) {
                        KernelArgs.setFloat(x, i, (float) Math.scalb(1 + rnd.nextDouble(), rnd.nextInt(29) - 14));
                    }
                    partialsAsTheKernel(name, x, slots, name + " slots=" + slots + " rows=" + rows + " boundary=" + boundary);
                }
            }
            int n = 16 * slots + 100; // slots 0-99 of 17 elements, the others of 16
            // in whole-row steps: each row of a group of eight and the one past the groups
            for (int[] at : new int[][] {{1000, 0}, {1000, 5}, {1000, 9}, {1000, 14}, {20, 16}}) {
                for (float bad : new float[] {Float.POSITIVE_INFINITY, Float.NaN}) {
                    KernelArray x = KernelArgs.allocate(type, n);
                    for (int i = 0; i < n; i++) {
                        KernelArgs.setFloat(x, i, (float) rnd.nextGaussian());
                    }
                    KernelArgs.setFloat(x, at[1] * slots + at[0], bad);
                    String what = name + " slots=" + slots + " " + bad + " in slot " + at[0] + " row " + at[1];
                    DoubleArray got = partialsAsTheKernel(name, x, slots, what);
                    assertEquals(bad, got.get(at[0]), what);
                    assertTrue(Double.isFinite(got.get(at[0] - 1)) && Double.isFinite(got.get(at[0] + 1)), what);
                }
            }
        }
    }

    /**
     * One call of the whole-row steps over three blocks of steps ({@code PartialsWholeRows.BLOCK_STEPS},
     * the last one short), whose sums 4-7 are taken for a whole block before its sums 0-3: every
     * slot as the kernel sums it, with 17 rows (sum 0 also over the row past the groups); for fp16
     * an infinity in a row of sum 5 and a NaN in a row of sum 2 in different blocks, whose steps'
     * slots are then the kernel's one by one.
     */
    @ParameterizedTest
    @ValueSource(strings = {"bf16", "f16"})
    void wholeRowStepsAcrossBlocks(String type) {
        Assumptions.assumeTrue(Lanes.available(), "no vector module");
        boolean bf16 = type.equals("bf16");
        int slots = 2048 * 9; // 36 KiB between rows: a multiple of 4 KiB, so the rows crowd one set
        int rows = 17;
        Random rnd = new Random();
        // the kernel's sums over `rows` rows exactly; the lanes' read from a copy with room past the
        // last row, so that its last step's vectors stay inside the array
        Class<?> arrayType = bf16 ? Bfloat16Array.class : HalfArray.class;
        KernelArray x = KernelArgs.allocate(arrayType, rows * slots + 64);
        KernelArray exact = KernelArgs.allocate(arrayType, rows * slots);
        SixteenBitFloatArray h = (SixteenBitFloatArray) exact;
        for (int i = 0; i < rows * slots; i++) {
            KernelArgs.setFloat(exact, i, (float) Math.scalb(1 + rnd.nextDouble(), rnd.nextInt(29) - 14));
        }
        if (!bf16) {
            KernelArgs.setFloat(exact, 5 * slots + 300 * 32 + 7, Float.POSITIVE_INFINITY); // block 1, sum 5
            KernelArgs.setFloat(exact, 10 * slots + 520 * 32 + 3, Float.NaN); // block 2, sum 2 (row 10)
        }
        MemorySegment.copy(exact.segment(), 0, x.segment(), 0, exact.segment().byteSize());
        DoubleArray got = new DoubleArray(slots);
        KernelArgs.poison(got);
        long steps = slots / (2 * Lanes.width());
        long done = bf16
                ? Lanes.squaresPartialsBf16(x.segment(), slots, 0, steps, rows, got.segment())
                : Lanes.squaresPartialsF16(x.segment(), slots, 0, steps, rows, got.segment(),
                        p -> ReductionKernels.squares16(h, (int) p, slots, false));
        assertEquals(steps, done, "every step within the array");
        for (int p = 0; p < slots; p++) {
            assertEquals(ReductionKernels.squares16(h, p, slots, bf16), got.get(p), type + " slot " + p);
        }
        if (!bf16) {
            assertEquals(Double.POSITIVE_INFINITY, got.get(300 * 32 + 7), "the infinity's slot");
            assertTrue(Double.isNaN(got.get(520 * 32 + 3)), "the NaN's slot");
        }
    }

    /**
     * A tall array (each running sum read one at a time) with one infinity and one NaN, in
     * different blocks of slots: those blocks' slots as the kernel sums them, the others' too. The
     * infinity in each of the four rows a pass of running sum 1 reads at once (rows 33, 41, 49, 57).
     */
    @ParameterizedTest
    @ValueSource(strings = {"sumOfSquaresPartials", "sumOfSquaresPartialsBf16", "sumOfSquaresPartialsF16"})
    void tallPartialsWithAnInfinityAndANaN(String name) {
        Random rnd = new Random();
        int slots = 5000;
        int n = 70 * slots + 123;
        for (int row : new int[] {33, 41, 49, 57}) {
            for (float bad : new float[] {Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN}) {
                KernelArray x = KernelArgs.allocate(input(name, 1, rnd, 0).getClass(), n);
                for (int i = 0; i < n; i++) {
                    KernelArgs.setFloat(x, i, (float) rnd.nextGaussian());
                }
                KernelArgs.setFloat(x, row * slots + 2500, bad); // a slot of the second block
                KernelArgs.setFloat(x, 69 * slots + 4999, Float.NaN); // the last slot, in its last row
                String what = name + " " + bad + " in row " + row;
                DoubleArray got = partialsAsTheKernel(name, x, slots, what);
                assertEquals(bad < 0 ? Double.POSITIVE_INFINITY : bad, got.get(2500), what);
                assertTrue(Double.isNaN(got.get(4999)), what);
                assertTrue(Double.isFinite(got.get(2499)) && Double.isFinite(got.get(0)), what);
            }
        }
    }

    /**
     * fp16 halves in the thousands, whose squares add up past an infinity's square (2^32), the
     * sums the lanes check for an infinity or NaN instead of every magnitude: where none is there,
     * those slots are the kernel's finite sums; one infinity or NaN among them still shows. Short
     * slots in steps, rows that crowd a cache set, and tall slots.
     */
    @Test
    void f16PartialsOfLargeFiniteHalves() {
        Random rnd = new Random();
        for (int[] c : new int[][] {{20 * 1000 + 300, 1000}, {16 * 2048 + 100, 2048}, {70 * 3000 + 17, 3000}}) {
            int n = c[0];
            int slots = c[1];
            for (float bad : new float[] {0, Float.POSITIVE_INFINITY, Float.NaN}) {
                KernelArray x = KernelArgs.allocate(HalfArray.class, n);
                for (int i = 0; i < n; i++) {
                    // most slots' sums past 2^32, some below
                    KernelArgs.setFloat(x, i, (float) ((rnd.nextBoolean() ? 1 : -1) * (i % slots < 40 ? 1 + rnd.nextDouble() : 4000 + 61_000 * rnd.nextDouble())));
                }
                if (bad != 0) {
                    KernelArgs.setFloat(x, 3 * slots + 77, bad);
                }
                String what = "n=" + n + " slots=" + slots + " " + bad;
                DoubleArray got = partialsAsTheKernel("sumOfSquaresPartialsF16", x, slots, what);
                assertTrue(got.get(500) > 0x1p32 && Double.isFinite(got.get(500)), what + ": a large finite slot, " + got.get(500));
                assertTrue(got.get(7) < 0x1p32, what + ": a small slot");
                if (bad != 0) {
                    assertEquals(bad, got.get(77), what);
                }
            }
        }
    }

    /**
     * The fp16 sum of squares of halves in the thousands (past an infinity's square): finite and
     * within fp32 rounding (the kernel's result) of float64's; with one infinity, infinite; with a NaN, NaN.
     */
    @Test
    void f16SumOfSquaresOfLargeFiniteHalves() {
        Random rnd = new Random();
        for (int n : new int[] {4121, 300_001}) {
            KernelArray x = KernelArgs.allocate(HalfArray.class, n);
            double exact = 0;
            for (int i = 0; i < n; i++) {
                KernelArgs.setFloat(x, i, (float) (4000 + 61_000 * rnd.nextDouble()));
                double v = Float.float16ToFloat(((HalfArray) x).getBits(i));
                exact += v * v;
            }
            FloatArray out = new FloatArray(1);
            JvmKernels.run(spec("sumOfSquaresF16"), spec("sumOfSquaresF16").launchShape(n), x, out);
            assertEquals(exact, out.get(0), 1e-6 * exact, "n=" + n);
            for (float bad : new float[] {Float.NEGATIVE_INFINITY, Float.NaN}) {
                KernelArgs.setFloat(x, n / 2, bad);
                out.set(0, 0);
                JvmKernels.run(spec("sumOfSquaresF16"), spec("sumOfSquaresF16").launchShape(n), x, out);
                assertEquals(Float.isNaN(bad) ? Double.NaN : Double.POSITIVE_INFINITY, out.get(0), "n=" + n + " " + bad);
            }
        }
    }

    @Test
    void sumPartialsBitForBit() {
        Random rnd = new Random();
        // slots in lanes and past the last whole step, those before and after the boundary of one element fewer, more slots than elements
        for (int[] c : new int[][] {{1, 1}, {10_000, 64}, {300_001, 2048}, {5_000, 1_003}, {100, 300}, {64_007, 61},
                {65 * 2048 + 33, 2048}, {100 * 1200 + 7, 1200}}) { // the last two in chunks of rows
            DoubleArray x = new DoubleArray(c[0]);
            for (int i = 0; i < c[0]; i++) {
                x.set(i, rnd.nextGaussian() * Math.pow(10, rnd.nextInt(10) - 5));
            }
            partialsAsTheKernel("sumPartials", x, c[1], "n=" + c[0]);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"checkFinite", "checkFiniteBf16", "checkFiniteF16"})
    void finiteFlags(String name) {
        Random rnd = new Random();
        for (double rate : new double[] {0, 1e-5, 0.1}) {
            for (int n : new int[] {1, 999, 100_000}) {
                KernelArray x = input(name, n, rnd, rate);
                IntArray want = new IntArray(1);
                IntArray got = new IntArray(1);
                kernel(spec(name), n, x, want);
                JvmKernels.run(spec(name), spec(name).launchShape(n), x, got);
                assertEquals(want.get(0), got.get(0), name + " n=" + n + " rate=" + rate);
            }
        }
    }

    /**
     * One element of a finite array at a time made an infinity, a NaN or the largest finite value,
     * at the ends, inside a word's either half and in the lanes' tail: the flag as the kernel sets it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"checkFinite", "checkFiniteBf16", "checkFiniteF16"})
    void finiteFlagOfOneElement(String name) {
        Random rnd = new Random();
        float largest = name.endsWith("Bf16") ? 0x1.FEp127f : name.endsWith("F16") ? 65504f : Float.MAX_VALUE;
        for (int n : new int[] {1, 2, 3, 63, 64, 65, 1023, 100_001}) {
            for (int at : new int[] {0, 1, n / 2, n - 2, n - 1}) {
                for (float v : new float[] {Float.NEGATIVE_INFINITY, Float.NaN, largest, -largest}) {
                    if (at < 0 || at >= n) {
                        continue;
                    }
                    // finite in every type (random inputs' edge values round to a 16-bit infinity)
                    KernelArray x = KernelArgs.allocate(input(name, 1, rnd, 0).getClass(), n);
                    for (int i = 0; i < n; i++) {
                        KernelArgs.setFloat(x, i, (float) rnd.nextGaussian());
                    }
                    KernelArgs.setFloat(x, at, v);
                    IntArray want = new IntArray(1);
                    IntArray got = new IntArray(1);
                    kernel(spec(name), n, x, want);
                    JvmKernels.run(spec(name), spec(name).launchShape(n), x, got);
                    assertEquals(Float.isFinite(v) ? 0 : 1, want.get(0), "the kernel itself, " + name + " n=" + n + " at " + at + " = " + v);
                    assertEquals(want.get(0), got.get(0), name + " n=" + n + " at " + at + " = " + v);
                }
            }
        }
    }

    /** An array of {@code like}'s type over {@code segment}. */
    private static KernelArray over(KernelArray like, MemorySegment segment) {
        return switch (like) {
            case FloatArray f -> FloatArray.wrap(segment);
            case Bfloat16Array b -> Bfloat16Array.wrap(segment);
            case HalfArray h -> HalfArray.wrap(segment);
            case DoubleArray d -> DoubleArray.wrap(segment);
            case IntArray i -> IntArray.wrap(segment);
            default -> throw new IllegalArgumentException(like.getClass().getName());
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"sumOfSquares", "sumOfSquaresBf16", "sumOfSquaresF16"})
    void sumOfSquaresWithinRounding(String name) {
        Random rnd = new Random();
        for (double rate : new double[] {0, 1e-5, 1e-3}) {
            // 45 and 4,121: whole passes of four vectors, then single vectors, then single elements
            for (int n : new int[] {1, 45, 4097, 4121, 300_000}) {
                KernelArray x = input(name, n, rnd, rate);
                double exact = 0;
                for (int i = 0; i < n; i++) {
                    double v = io.gradsync.tasks.testing.BuiltinDifferential.floatAt(x, i);
                    exact += v * v;
                }
                FloatArray got = new FloatArray(1);
                JvmKernels.run(spec(name), spec(name).launchShape(n), x, got);
                float g = got.get(0);
                boolean ok = Double.isNaN(exact) ? Float.isNaN(g)
                        : exact > Float.MAX_VALUE ? g == Float.POSITIVE_INFINITY : Math.abs(g - exact) <= 1e-6 * exact + 1e-30;
                assertTrue(ok, name + " n=" + n + " rate=" + rate + ": " + g + " vs " + exact);
            }
        }
    }

    /**
     * Memory of a confined arena, which only its owner thread may touch, is reduced on the caller's
     * thread: the results of the same arrays in shared memory, and no WrongThreadException.
     */
    @ParameterizedTest
    @ValueSource(strings = {"checkFiniteF16", "sumOfSquaresBf16", "sumOfSquaresPartialsF16", "sumPartials"})
    void confinedMemoryOnTheCallersThread(String name) {
        Random rnd = new Random();
        int n = 1 << 20;
        int slots = name.contains("Partials") ? 4096 : 1;
        KernelArray x = name.equals("sumPartials") ? KernelArgs.random(DoubleArray.class, n, rnd, 0) : input(name, n, rnd, 1e-6);
        KernelArray shared = name.startsWith("check") ? new IntArray(1) : name.contains("Partials") ? new DoubleArray(slots) : new FloatArray(1);
        JvmKernels.run(spec(name), spec(name).launchShape(name.contains("Partials") ? slots : n), x, shared);
        try (Arena arena = Arena.ofConfined()) {
            KernelArray in = over(x, arena.allocate(x.segment().byteSize(), 64).copyFrom(x.segment()));
            KernelArray out = over(shared, arena.allocate(shared.segment().byteSize(), 64));
            JvmKernels.run(spec(name), spec(name).launchShape(name.contains("Partials") ? slots : n), in, out);
            assertEquals(-1, out.segment().mismatch(shared.segment()), name);
        }
    }

    @Test
    void everyReductionHasAForm() {
        List<KernelSpec> reductions = BuiltinKernels.all().stream().filter(s -> s.family().orElseThrow() == KernelFamily.REDUCTIONS).toList();
        assertEquals(10, reductions.size(), "sumOfSquares, checkFinite, sumOfSquaresPartials for three types, sumPartials");
        for (KernelSpec s : reductions) {
            assertTrue(s.forms().contains(KernelSpec.Form.JVM_FAST), s.name());
        }
    }
}
