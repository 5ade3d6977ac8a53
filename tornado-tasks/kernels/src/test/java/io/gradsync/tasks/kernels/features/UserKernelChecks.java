package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.*;
import io.gradsync.tasks.compiler.testing.*;

import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.api.WorkerGrid;
import io.gradsync.tasks.testing.DeviceRunner;
import io.gradsync.tasks.testing.KernelArgs;
import io.gradsync.tasks.testing.OpenClRunner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The kernels users write ({@link UserKernels}), compiled, run on a device on fresh random inputs
 * and the edge values of each operation, outputs poisoned first, and compared with the Java
 * method run on the JVM: bit for bit where Java's result is exact (StrictMath included), within
 * Math's ulp bound for Math's functions. Subclasses pick the device.
 */
abstract class UserKernelChecks {
    private static final double[] DOUBLE_EDGES = {
            0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, Double.MIN_VALUE, -Double.MIN_VALUE,
            Double.MIN_NORMAL, Double.MAX_VALUE, -Double.MAX_VALUE, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
            1e-300, 1e300, -1e300, 709.78, 709.79, -745.2, -745.1, 1e22, 3.141592653589793, 1.5707963267948966, 1e-9,
            2147483647.5, -2147483648.7, 9.3e18, -9.3e18, 4503599627370497.0, 0x1p52, 0x1p-1022, 1 - 0x1p-53, 1 + 0x1p-52
    };
    private static final float[] FLOAT_EDGES = {
            0f, -0f, 1f, -1f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 0.49999997f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL,
            Float.MAX_VALUE, -Float.MAX_VALUE, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 2147483647f, 2.1474836E9f,
            -2.1474839E9f, 9.223372E18f, -9.3e18f, 8388609f, 88.7f, -103.9f, 1e-30f, 3e38f, 65535.9f, 65536.5f, -129.5f
    };

    /** The device under test; may skip the test through an assumption. */
    abstract DeviceRunner device();

    private static Method method(String name) {
        return Arrays.stream(UserKernels.class.getDeclaredMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    }

    /** Runs on the JVM and the device; returns {expected, actual}. */
    private Object[][] run(String name, Object[] args, io.gradsync.tasks.compiler.LaunchShape shape) {
        Method m = method(name);
        CompiledKernel k = new KernelCompiler().compile(m);
        Object[] expected = KernelArgs.deepCopy(args);
        Object[] actual = KernelArgs.deepCopy(args);
        KernelArgs.runOnJvm(m, k, expected, shape);
        device().run(k, actual, shape);
        return new Object[][]{expected, actual};
    }

    private Object[][] run(String name, Object[] args, int threads) {
        return run(name, args, new io.gradsync.tasks.compiler.LaunchShape((threads + 63) / 64, 64, 1, 1, 1, 1, threads, 1, 1));
    }

    /** Every array argument bit for bit (any NaN equal to any NaN). */
    private void assertExact(String name, Object[] args, int threads) {
        Object[][] r = run(name, args, threads);
        compareExact(name, args, r);
    }

    private void compareExact(String name, Object[] args, Object[][] r) {
        Method m = method(name);
        for (int i = 0; i < args.length; i++) {
            if (r[0][i] instanceof KernelArray e) {
                int d = KernelArgs.firstDifference(e, (KernelArray) r[1][i]);
                if (d >= 0) {
                    CompiledKernel k = new KernelCompiler().compile(m);
                    fail(name + ": " + m.getParameters()[i].getName() + "[" + d + "]: Java " + show(e, d) + ", " + device().name() + " "
                            + show((KernelArray) r[1][i], d) + "; inputs " + inputs(args, d) + "\n"
                            + (device() instanceof OpenClRunner ? k.openCl() : k.ptx(90)).lines().limit(400).reduce("", (a, b) -> a + b + "\n"));
                }
            }
        }
    }

    private static String inputs(Object[] args, int d) {
        StringBuilder b = new StringBuilder();
        for (Object a : args) {
            if (a instanceof KernelArray k && d < k.getSize()) {
                b.append(show(k, d)).append(' ');
            }
        }
        return b.toString();
    }

    private static String show(KernelArray a, int i) {
        return switch (a) {
            case FloatArray f -> f.get(i) + " (0x" + Integer.toHexString(Float.floatToRawIntBits(f.get(i))) + ")";
            case DoubleArray f -> f.get(i) + " (0x" + Long.toHexString(Double.doubleToRawLongBits(f.get(i))) + ")";
            case IntArray x -> Integer.toString(x.get(i));
            case LongArray x -> Long.toString(x.get(i));
            default -> "?";
        };
    }

    static DoubleArray doubles(int n, SplittableRandom rnd, double scale) {
        DoubleArray a = new DoubleArray(n);
        for (int i = 0; i < n; i++) {
            a.set(i, i < DOUBLE_EDGES.length ? DOUBLE_EDGES[i] : switch (rnd.nextInt(5)) {
                case 0 -> DOUBLE_EDGES[rnd.nextInt(DOUBLE_EDGES.length)];
                case 1 -> (rnd.nextDouble() - 0.5) * 1e6;
                case 2 -> Double.longBitsToDouble(rnd.nextLong());
                default -> rnd.nextGaussian() * scale;
            });
        }
        return a;
    }

    static FloatArray floats(int n, SplittableRandom rnd, double scale) {
        FloatArray a = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            a.set(i, i < FLOAT_EDGES.length ? FLOAT_EDGES[i] : switch (rnd.nextInt(5)) {
                case 0 -> FLOAT_EDGES[rnd.nextInt(FLOAT_EDGES.length)];
                case 1 -> (float) ((rnd.nextDouble() - 0.5) * 1e6);
                case 2 -> Float.intBitsToFloat(rnd.nextInt());
                default -> (float) (rnd.nextGaussian() * scale);
            });
        }
        return a;
    }

    private static DoubleArray poisonedDoubles(int n) {
        DoubleArray a = new DoubleArray(n);
        KernelArgs.poison(a);
        return a;
    }

    private static FloatArray poisonedFloats(int n) {
        FloatArray a = new FloatArray(n);
        KernelArgs.poison(a);
        return a;
    }

    private static IntArray poisonedInts(int n) {
        IntArray a = new IntArray(n);
        KernelArgs.poison(a);
        return a;
    }

    private static LongArray poisonedLongs(int n) {
        LongArray a = new LongArray(n);
        KernelArgs.poison(a);
        return a;
    }

    // ---------------------------------------------------------------- math

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"strictLog", "strictLog1p", "strictExpm1", "strictExp", "strictTanh", "strictSin", "strictCos"})
    void strictMathIsExact(String name) {
        SplittableRandom rnd = new SplittableRandom();
        int n = 3000;
        double scale = name.contains("Exp") ? 20 : name.contains("Sin") || name.contains("Cos") ? 1e3 : 10;
        DoubleArray x = doubles(n, rnd, scale);
        if (name.equals("strictLog")) {
            for (int i = 0; i < n; i++) {
                x.set(i, Math.abs(x.get(i)));
            }
        }
        assertExact(name, new Object[]{x, poisonedDoubles(n)}, n);
    }

    /**
     * An optimizer's step with {@code StrictMath.pow} before its loop and loads after stores, an
     * element-wise loop whose vector form (four elements a thread on CUDA, where the arrays lie apart)
     * gives Java's bits, the tail past the last whole group included.
     */
    @ParameterizedTest(name = "step {0}")
    @ValueSource(ints = {1, 7, 1000})
    void anOptimizerStepWithCodeBeforeItsLoopIsExact(int step) {
        assertTrue(new KernelCompiler().compile(method("adamStep")).isElementwise(), "element-wise");
        SplittableRandom rnd = new SplittableRandom();
        int n = 4099;
        FloatArray v = floats(n, rnd, 1);
        for (int i = 0; i < n; i += 2) {
            v.set(i, Math.abs(v.get(i))); // a second moment is never negative
        }
        Object[] args = {floats(n, rnd, 1), floats(n, rnd, 1), floats(n, rnd, 1), v, 1e-3f, step};
        assertExact("adamStep", args, n);
        if (device() instanceof io.gradsync.tasks.testing.CudaRunner cuda) {
            cuda.run(new KernelCompiler().compile(method("adamStep")), KernelArgs.deepCopy(args),
                    new io.gradsync.tasks.compiler.LaunchShape((n + 63) / 64, 64, 1, 1, 1, 1, n, 1, 1));
            assertEquals(4, cuda.lastLaunch().vectorWidth(), "the vector form ran");
        }
    }

    @Test
    void strictPowIsExact() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 3000;
        DoubleArray x = doubles(n, rnd, 4);
        DoubleArray y = doubles(n, rnd, 3);
        for (int i = 0; i < n; i += 3) {
            x.set(i, Math.abs(x.get(i)) % 100); // plenty of finite, ordinary powers among the edges
            y.set(i, y.get(i) % 50);
        }
        y.set(7, 2.0);
        y.set(8, 0.5);
        y.set(9, -1.0);
        assertExact("strictPow", new Object[]{x, y, poisonedDoubles(n)}, n);
    }

    @Test
    void exactFunctionsOnDoublesAndFloats() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 4000;
        assertExact("exactDouble", new Object[]{doubles(n, rnd, 1e3), poisonedDoubles(n), poisonedDoubles(n), poisonedDoubles(n),
                poisonedLongs(n), poisonedDoubles(n)}, n);
        assertExact("exactFloat", new Object[]{floats(n, rnd, 1e3), poisonedFloats(n), poisonedFloats(n), poisonedInts(n),
                poisonedFloats(n), poisonedFloats(n), poisonedFloats(n)}, n);
    }

    /** Math's functions may differ from the JVM's intrinsics, within the ulps Math's Javadoc allows. */
    @Test
    void mathFunctionsWithinTheirUlpBounds() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 3000;
        DoubleArray x = doubles(n, rnd, 5);
        DoubleArray y = doubles(n, rnd, 3);
        Object[] args = {x, y, poisonedDoubles(n), poisonedDoubles(n), poisonedDoubles(n), poisonedDoubles(n), poisonedDoubles(n),
                poisonedDoubles(n), poisonedDoubles(n), poisonedDoubles(n)};
        Object[][] r = run("mathDouble", args, n);
        String[] names = {"log", "exp", "pow", "tanh", "sin", "cos", "log1p", "expm1"};
        double[] ulps = {1, 1, 1, 2.5, 1, 1, 1, 1};
        for (int f = 0; f < names.length; f++) {
            DoubleArray e = (DoubleArray) r[0][f + 2];
            DoubleArray a = (DoubleArray) r[1][f + 2];
            for (int i = 0; i < n; i++) {
                double ev = e.get(i);
                double av = a.get(i);
                boolean ok = Double.isNaN(ev) ? Double.isNaN(av) : ev == av || Math.abs(ev - av) <= 2 * ulps[f] * Math.ulp(ev);
                if (!ok) {
                    fail("Math." + names[f] + "(" + x.get(i) + (f == 2 ? ", " + y.get(i) : "") + "): JVM " + ev + ", " + device().name() + " " + av);
                }
            }
        }
    }

    @Test
    void floorModAndFloorDiv() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 2000;
        IntArray a = new IntArray(n);
        IntArray b = new IntArray(n);
        LongArray la = new LongArray(n);
        LongArray lb = new LongArray(n);
        int[] edges = {Integer.MIN_VALUE, Integer.MAX_VALUE, -1, 1, 7, -7, 0};
        for (int i = 0; i < n; i++) {
            a.set(i, rnd.nextInt(4) == 0 ? edges[rnd.nextInt(edges.length)] : rnd.nextInt(2001) - 1000);
            int d = rnd.nextInt(4) == 0 ? edges[rnd.nextInt(edges.length - 1)] : rnd.nextInt(41) - 20;
            b.set(i, d == 0 ? 3 : d);
            la.set(i, rnd.nextInt(4) == 0 ? Long.MIN_VALUE : rnd.nextLong());
            long ld = rnd.nextInt(3) == 0 ? -1 : rnd.nextLong(1, 1000) * (rnd.nextBoolean() ? 1 : -1);
            lb.set(i, ld);
        }
        assertExact("floorModDiv", new Object[]{a, b, poisonedInts(n), poisonedInts(n), la, lb, poisonedLongs(n), poisonedLongs(n)}, n);
    }

    // ---------------------------------------------------------------- integers and casts

    @Test
    void integerDivisionAtMinOverMinusOne() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 2000;
        IntArray a = new IntArray(n);
        IntArray b = new IntArray(n);
        LongArray la = new LongArray(n);
        LongArray lb = new LongArray(n);
        for (int i = 0; i < n; i++) {
            boolean edge = i < 16 || rnd.nextInt(4) == 0;
            a.set(i, edge ? Integer.MIN_VALUE + (i & 1) : rnd.nextInt());
            b.set(i, edge ? -1 : (rnd.nextInt(1000) + 1) * (rnd.nextBoolean() ? 1 : -1));
            la.set(i, edge ? Long.MIN_VALUE + (i & 1) : rnd.nextLong());
            lb.set(i, edge ? -1 : rnd.nextLong(1, Long.MAX_VALUE) * (rnd.nextBoolean() ? 1 : -1));
        }
        Object[][] r = run("integerDivision", new Object[]{a, b, poisonedInts(n), poisonedInts(n), la, lb, poisonedLongs(n), poisonedLongs(n)}, n);
        compareExact("integerDivision", new Object[]{a, b, null, null, la, lb, null, null}, r);
        assertEquals(Integer.MIN_VALUE, ((IntArray) r[1][2]).get(0), "MIN / -1");
        assertEquals(0, ((IntArray) r[1][3]).get(0), "MIN % -1");
        assertEquals(Long.MIN_VALUE, ((LongArray) r[1][6]).get(0), "Long.MIN / -1");
        assertEquals(0L, ((LongArray) r[1][7]).get(0), "Long.MIN % -1");
    }

    @Test
    void absOfMinIsNegativeInEveryUse() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 2000;
        IntArray a = new IntArray(n);
        IntArray d = new IntArray(n);
        LongArray la = new LongArray(n);
        LongArray ld = new LongArray(n);
        int[] divisors = {-1, 1, 2, 3, 7, -7, 1000, Integer.MAX_VALUE, Integer.MIN_VALUE};
        for (int i = 0; i < n; i++) {
            boolean edge = i < 32 || rnd.nextInt(3) == 0;
            a.set(i, edge ? Integer.MIN_VALUE : rnd.nextInt());
            d.set(i, divisors[rnd.nextInt(divisors.length)]);
            la.set(i, edge ? Long.MIN_VALUE : rnd.nextLong());
            ld.set(i, i % 3 == 0 ? -1 : rnd.nextLong(1, Long.MAX_VALUE) * (rnd.nextBoolean() ? 1 : -1));
        }
        Object[] args = {a, d, poisonedInts(n), poisonedInts(n), poisonedInts(n), poisonedInts(n), la, ld, poisonedLongs(n), poisonedLongs(n)};
        Object[][] r = run("absOfMin", args, n);
        compareExact("absOfMin", args, r);
        assertEquals(1, ((IntArray) r[1][5]).get(0), "abs(MIN) < 0");
        assertEquals(Integer.MIN_VALUE % 7 + Integer.MIN_VALUE / 3 * 5, ((IntArray) r[1][4]).get(0), "abs(MIN) % 7 + abs(MIN) / 3 * 5");
    }

    @Test
    void shiftCountsTakeTheirLowBits() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 1000;
        IntArray a = new IntArray(n);
        IntArray c = new IntArray(n);
        LongArray la = new LongArray(n);
        for (int i = 0; i < n; i++) {
            a.set(i, rnd.nextInt());
            c.set(i, i < 200 ? i - 100 : rnd.nextInt());
            la.set(i, rnd.nextLong());
        }
        assertExact("shiftCounts", new Object[]{a, c, poisonedInts(n), la, poisonedLongs(n)}, n);
    }

    @Test
    void castsOfNanInfinityAndOutOfRangeFollowJava() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 3000;
        DoubleArray d = doubles(n, rnd, 1e12);
        assertExact("casts", new Object[]{floats(n, rnd, 1e12), d, poisonedInts(n), poisonedLongs(n), poisonedInts(n), poisonedLongs(n),
                poisonedInts(n)}, n);
    }

    @Test
    void minAndMaxOfNanAndZerosFollowJava() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 3000;
        FloatArray a = floats(n, rnd, 10);
        FloatArray b = floats(n, rnd, 10);
        DoubleArray c = doubles(n, rnd, 10);
        DoubleArray d = doubles(n, rnd, 10);
        for (int i = 0; i < FLOAT_EDGES.length * FLOAT_EDGES.length; i++) { // every edge against every edge
            a.set(i, FLOAT_EDGES[i % FLOAT_EDGES.length]);
            b.set(i, FLOAT_EDGES[i / FLOAT_EDGES.length]);
        }
        for (int i = 0; i < DOUBLE_EDGES.length * DOUBLE_EDGES.length; i++) {
            c.set(i, DOUBLE_EDGES[i % DOUBLE_EDGES.length]);
            d.set(i, DOUBLE_EDGES[i / DOUBLE_EDGES.length]);
        }
        assertExact("minMax", new Object[]{a, b, poisonedFloats(n), poisonedFloats(n), poisonedFloats(n),
                c, d, poisonedDoubles(n), poisonedDoubles(n), poisonedDoubles(n)}, n);
    }

    @Test
    void floatAndDoubleRemainder() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 4000;
        FloatArray a = floats(n, rnd, 100);
        FloatArray b = floats(n, rnd, 3);
        DoubleArray c = doubles(n, rnd, 100);
        DoubleArray d = doubles(n, rnd, 3);
        for (int i = 0; i < 40; i++) {
            b.set(i, FLOAT_EDGES[(i * 7) % FLOAT_EDGES.length]); // every edge against every edge, in part
            d.set(i, DOUBLE_EDGES[(i * 11) % DOUBLE_EDGES.length]);
        }
        assertExact("remainders", new Object[]{a, b, poisonedFloats(n), c, d, poisonedDoubles(n)}, n);
    }

    // ---------------------------------------------------------------- names, parameters

    @Test
    void booleanCharByteShortParametersAndKeywordNames() {
        for (boolean flag : new boolean[]{true, false}) {
            FloatArray out = poisonedFloats(700);
            assertExact("kernel", new Object[]{out, flag, 'Z', (byte) -3, (short) 1234, 0.75f}, 700);
        }
        CompiledKernel k = new KernelCompiler().compile(method("kernel"));
        assertTrue(k.openCl().contains("__kernel void k_kernel("), k.openCl());
    }

    @Test
    void constantArgumentsFoldTheirBranches() {
        assertExact("constantArguments", new Object[]{floats(500, new SplittableRandom(), 1)}, 500);
    }

    // ---------------------------------------------------------------- switch, arrays

    @Test
    void tableAndLookupSwitches() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 3000;
        IntArray kinds = new IntArray(n);
        for (int i = 0; i < n; i++) {
            kinds.set(i, rnd.nextInt(9) - 2);
        }
        kinds.set(0, -7);
        kinds.set(1, 1000);
        assertExact("activation", new Object[]{floats(n, rnd, 3), poisonedFloats(n), kinds}, n);
    }

    @Test
    void privateArraysAndStaticTables() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 2000;
        assertExact("privateArrays", new Object[]{floats(n, rnd, 2), poisonedFloats(n), poisonedInts(n)}, n);
    }

    // ---------------------------------------------------------------- grids

    @ParameterizedTest(name = "n={0}")
    @ValueSource(ints = {1, 1000, 4096})
    void statedGridCoversEveryElementEvenWhenTheFirstArrayIsShort(int n) {
        FloatArray factor = new FloatArray(1);
        factor.set(0, 3f);
        FloatArray x = floats(n, new SplittableRandom(), 1);
        Object[][] r = run("scaleByFactor", new Object[]{null, factor, x}, io.gradsync.tasks.compiler.LaunchShape.of(WorkerGrid.of(n)));
        compareExact("scaleByFactor", new Object[]{null, factor, x}, r);
        FloatArray out = (FloatArray) r[1][2];
        for (int i = FLOAT_EDGES.length; i < n; i++) {
            assertEquals(x.get(i) * 3f + n, out.get(i), "element " + i);
        }
    }

    @Test
    void twoAndThreeDimensionalGrids() {
        int rows = 37;
        int cols = 53;
        FloatArray in = floats(rows * cols, new SplittableRandom(), 1);
        WorkerGrid grid = WorkerGrid.of(cols, rows).withLocalSize(16, 4);
        Object[] args = {null, in, poisonedFloats(rows * cols), poisonedInts(rows * cols), rows, cols};
        compareExact("transpose", args, run("transpose", args, io.gradsync.tasks.compiler.LaunchShape.of(grid)));
        WorkerGrid cube = WorkerGrid.of(9, 5, 6).withLocalSize(4, 2, 3);
        Object[] c = {null, poisonedInts(9 * 5 * 6)};
        compareExact("coordinates", c, run("coordinates", c, io.gradsync.tasks.compiler.LaunchShape.of(cube)));
    }

    @Test
    void groupLocalMemoryAndBarriers() {
        int groups = 37;
        FloatArray x = floats(groups * 64, new SplittableRandom(), 1);
        for (int i = 0; i < x.getSize(); i++) {
            x.set(i, Math.round(x.get(i) * 64) / 64f); // sums in any order are exact: the tree's order is compared, not rounding
            if (!Float.isFinite(x.get(i))) {
                x.set(i, 1f);
            }
        }
        Object[] args = {null, x, poisonedFloats(groups)};
        compareExact("groupSums", args, run("groupSums", args, io.gradsync.tasks.compiler.LaunchShape.of(WorkerGrid.of(groups * 64).withLocalSize(64))));
    }

    @Test
    void barrierKernelRefusesAGridOfPartGroups() {
        FloatArray x = new FloatArray(100);
        var device = device(); // skips, visibly, where the device is missing: not inside assertThrows
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> device.run(new KernelCompiler().compile(method("groupSums")),
                new Object[]{null, x, new FloatArray(2)}, io.gradsync.tasks.compiler.LaunchShape.of(WorkerGrid.of(100).withLocalSize(64))));
        assertTrue(e.getMessage().contains("whole work groups"), e.getMessage());
    }

    @Test
    void warpSumsAndMaxima() {
        SplittableRandom rnd = new SplittableRandom();
        int cols = 64;
        int rows = 24;
        int n = cols * rows;
        IntArray xi = new IntArray(n);
        for (int i = 0; i < n; i++) {
            xi.set(i, rnd.nextInt());
        }
        Object[] args = {null, floats(n, rnd, 10), xi, poisonedFloats(n), poisonedFloats(n), poisonedInts(n), poisonedInts(n)};
        compareExact("warps", args, run("warps", args, io.gradsync.tasks.compiler.LaunchShape.of(WorkerGrid.of(cols, rows).withLocalSize(16, 4))));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> device().run(new KernelCompiler().compile(method("warps")),
                KernelArgs.deepCopy(args), io.gradsync.tasks.compiler.LaunchShape.of(WorkerGrid.of(cols, rows).withLocalSize(8, 3))));
        assertTrue(e.getMessage().contains("whole warps"), e.getMessage());
    }

    // ---------------------------------------------------------------- atomics

    @Test
    void atomicsWithScopesAndOrders() {
        SplittableRandom rnd = new SplittableRandom();
        int n = 5000;
        IntArray data = new IntArray(n);
        for (int i = 0; i < n; i++) {
            data.set(i, rnd.nextInt(2_000_001) - 1_000_000);
        }
        IntArray maxima = new IntArray(2);
        maxima.set(0, Integer.MIN_VALUE);
        maxima.set(1, Integer.MAX_VALUE);
        FloatArray fmax = new FloatArray(2);
        fmax.set(0, Float.NEGATIVE_INFINITY);
        fmax.set(1, Float.POSITIVE_INFINITY);
        Object[] args = {null, data, new IntArray(16), maxima, new LongArray(2), fmax, new IntArray(2), new IntArray(2 * n), new FloatArray(1)};
        Object[][] r = run("atomics", args, io.gradsync.tasks.compiler.LaunchShape.of(WorkerGrid.of(n)));
        for (int i : new int[]{2, 3, 4, 5, 7, 8}) {
            int d = KernelArgs.firstDifference((KernelArray) r[0][i], (KernelArray) r[1][i]);
            assertEquals(-1, d, "argument " + i + " differs at " + d);
        }
        IntArray claimed = (IntArray) r[1][6];
        assertEquals(1, claimed.get(1), "exactly one thread claims the slot");
        assertTrue(claimed.get(0) >= 1 && claimed.get(0) <= n, "the claim holds a thread's id + 1");
    }
}
