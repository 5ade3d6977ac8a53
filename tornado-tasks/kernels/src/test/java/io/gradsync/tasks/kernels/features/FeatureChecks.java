package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.*;
import io.gradsync.tasks.compiler.testing.*;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.testing.KernelArgs;
import io.gradsync.tasks.testing.OpenClRunner;
import io.gradsync.tasks.testing.DeviceRunner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Each supported construct (in {@link FeatureKernels}) compiled, run on a device and compared
 * bit for bit with the Java method itself. Subclasses pick the device.
 */
abstract class FeatureChecks {
    private static final int LOCAL = 64;

    private static Method method(String name) {
        return Arrays.stream(FeatureKernels.class.getDeclaredMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    }

    /** The device under test; may skip the test through an assumption. */
    abstract DeviceRunner device();

    /** Runs on JVM and OpenCL with copies of {@code args}; asserts every array matches; returns the OpenCL results. */
    private Object[] assertSame(String name, Object[] args, int threads, int... skipExactCompare) {
        Method m = method(name);
        CompiledKernel k = new KernelCompiler().compile(m);
        Object[] expected = KernelArgs.deepCopy(args);
        Object[] actual = KernelArgs.deepCopy(args);
        KernelArgs.runOnJvm(m, k, expected, threads, LOCAL);
        DeviceRunner device = device();
        device.run(k, actual, threads, LOCAL);
        outer:
        for (int i = 0; i < args.length; i++) {
            for (int s : skipExactCompare) {
                if (s == i) {
                    continue outer;
                }
            }
            if (expected[i] instanceof KernelArray e) {
                int d = KernelArgs.firstDifference(e, (KernelArray) actual[i]);
                if (d >= 0) {
                    fail(name + ": parameter " + m.getParameters()[i].getName() + " differs at " + d + ": Java "
                            + show(e, d) + " vs " + device.name() + " " + show((KernelArray) actual[i], d) + " (input " + show((KernelArray) args[0], d) + ")\n"
                            + (device instanceof OpenClRunner ? k.openCl() : k.ptx(90)));
                }
            }
        }
        return new Object[]{expected, actual};
    }

    private static String show(KernelArray a, int i) {
        return switch (a) {
            case FloatArray f -> Float.toString(f.get(i));
            case DoubleArray f -> Double.toString(f.get(i));
            case IntArray x -> Integer.toString(x.get(i));
            case LongArray x -> Long.toString(x.get(i));
            case HalfArray h -> h.get(i) + "/0x" + Integer.toHexString(h.getBits(i) & 0xFFFF);
            case Bfloat16Array b -> b.get(i) + "/0x" + Integer.toHexString(b.getBits(i) & 0xFFFF);
        };
    }

    private static IntArray randomInts(int n, Random rnd) {
        IntArray a = new IntArray(n);
        for (int i = 0; i < n; i++) {
            a.set(i, switch (rnd.nextInt(6)) {
                case 0 -> Integer.MIN_VALUE + rnd.nextInt(3);
                case 1 -> Integer.MAX_VALUE - rnd.nextInt(3);
                case 2 -> rnd.nextInt(200) - 100;
                default -> rnd.nextInt();
            });
        }
        return a;
    }

    @ParameterizedTest(name = "n={0}")
    @ValueSource(ints = {1, 777, 5000})
    void intAndLongArithmetic(int n) {
        Random rnd = new Random();
        assertSame("intOps", new Object[]{randomInts(n, rnd), KernelArgs.allocate(IntArray.class, n), KernelArgs.allocate(LongArray.class, n)}, 128);
    }

    @ParameterizedTest(name = "n={0}")
    @ValueSource(ints = {1, 777, 5000})
    void floatDoubleMathConversionsCompares(int n) {
        Random rnd = new Random();
        FloatArray out = new FloatArray(n);
        KernelArgs.poison(out);
        assertSame("floatOps", new Object[]{KernelArgs.random(FloatArray.class, n, rnd, 0), out, new IntArray(n), new LongArray(n)}, 256);
    }

    @ParameterizedTest(name = "k={0}")
    @ValueSource(ints = {0, 1, 5, 40})
    void nestedLoopsBreakContinueWhile(int k) {
        Random rnd = new Random();
        int n = 999;
        FloatArray out = new FloatArray(n);
        KernelArgs.poison(out);
        assertSame("loops", new Object[]{KernelArgs.random(FloatArray.class, n, rnd, 0), out, k}, 320);
    }

    @Test
    void kernelContextStyle() {
        int n = 1000;
        FloatArray out = new FloatArray(n);
        KernelArgs.poison(out);
        assertSame("contextStyle", new Object[]{null, KernelArgs.random(FloatArray.class, n, new Random(), 0), out, new IntArray(n)}, 1024);
    }

    @Test
    void serialKernelRunsOnceWhateverTheLaunchSize() {
        int n = 300;
        FloatArray x = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            x.set(i, i * 0.5f);
        }
        Object[] r = assertSame("serial", new Object[]{x, new FloatArray(1)}, 256);
        assertEquals(22425f, ((FloatArray) ((Object[]) r[1])[1]).get(0));
    }

    @Test
    void halfAndBfloat16Conversions() {
        int n = 4096;
        Random rnd = new Random();
        assertSame("halves", new Object[]{new HalfArray(n), new Bfloat16Array(n), new IntArray(n), KernelArgs.random(FloatArray.class, n, rnd, 0)}, 512);
    }

    @Test
    void atomicAdds() {
        int n = 10_000;
        FloatArray x = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            x.set(i, (i % 17) * 0.25f); // exact in fp32 in any order
        }
        Object[] r = assertSame("atomics", new Object[]{null, x, new FloatArray(4), new IntArray(1)}, 10_048);
        IntArray count = (IntArray) ((Object[]) r[1])[3];
        assertEquals(n, count.get(0));
    }

    @Test
    void floatToIntegerConversionsSaturate() {
        float[] edges = {Float.NaN, -Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 3e9f, -3e9f, 2.5f, -2.5f,
                0.99f, -0.99f, 1e20f, -1e20f, 65535.7f, 70000.2f, -129.9f, 2147483520f, -2147483648f, 0f, -0f, Float.MIN_VALUE};
        Random rnd = new Random();
        int n = 3000;
        FloatArray in = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            in.set(i, i < edges.length ? edges[i] : rnd.nextBoolean() ? edges[rnd.nextInt(edges.length)] : (float) (rnd.nextGaussian() * 1e9));
        }
        assertSame("conversions", new Object[]{in, new IntArray(n), new LongArray(n)}, 512);
    }

    @Test
    void expWithinOneUlpOfFloat() {
        int n = 2000;
        FloatArray in = new FloatArray(n);
        Random rnd = new Random();
        for (int i = 0; i < n; i++) {
            in.set(i, (float) (rnd.nextDouble() * 50 - 26));
        }
        Object[] r = assertSame("expKernel", new Object[]{in, new FloatArray(n)}, 256, 1);
        FloatArray e = (FloatArray) ((Object[]) r[0])[1];
        FloatArray a = (FloatArray) ((Object[]) r[1])[1];
        for (int i = 0; i < n; i++) {
            assertTrue(e.get(i) == a.get(i) || Math.abs(e.get(i) - a.get(i)) <= Math.ulp(e.get(i)), "exp at " + in.get(i) * 30.0 + ": " + e.get(i) + " vs " + a.get(i));
        }
    }

}
