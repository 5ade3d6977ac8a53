package io.gradsync.tasks.testing;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import org.junit.jupiter.params.provider.Arguments;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The differential check of one built-in kernel on one device: fresh random inputs, outputs
 * poisoned, the Java method as reference, results equal bit for bit (NaN equals NaN); sums of
 * squares, whose atomic order differs, within 1e-5 relative of the float64 sum (NaN and infinity
 * where it is); finite flags
 * against a direct scan.
 */
public final class BuiltinDifferential {
    public static final int LOCAL = 64;

    private BuiltinDifferential() {
    }

    /**
     * The cases of a vector-form test: each of {@code kernels} at each of {@code lengths}, with its
     * arrays aligned ({@code Integer.MIN_VALUE}), every array one element off (-1) or only the last
     * one off (its index), launched with a work item per element and with a few groups striding.
     */
    public static Stream<Arguments> vectorCases(List<String> kernels, int... lengths) {
        List<Arguments> cases = new ArrayList<>();
        for (String name : kernels) {
            KernelSpec spec = BuiltinKernels.byName(name).orElseThrow();
            for (int n : lengths) {
                for (int shifted : new int[]{Integer.MIN_VALUE, -1, KernelIrs.ir(spec.compile()).arrayParams().size() - 1}) {
                    for (int threads : new int[]{(n + LOCAL - 1) / LOCAL * LOCAL, 3 * LOCAL}) {
                        cases.add(Arguments.of(spec, n, shifted, threads));
                    }
                }
            }
        }
        return cases.stream();
    }

    public static void check(DeviceRunner device, KernelSpec spec, int n, int threads) {
        if (spec.style() == KernelStyle.CONTEXT) {
            threads = Math.min(threads, 4096); // sums of squares: a bounded number of threads
        }
        Method m = spec.method();
        CompiledKernel k = spec.compile();
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        Object[] args = KernelArgs.forBuiltin(spec.name(), m, k, n, rnd);
        Object[] expected = KernelArgs.deepCopy(args);
        Object[] actual = KernelArgs.deepCopy(args);
        KernelArgs.runOnJvm(m, k, expected, threads, LOCAL);
        device.run(k, actual, threads, LOCAL);

        String where = spec.name() + " on " + device.name() + " n=" + n + " threads=" + threads + " seed=" + seed;
        try {
            for (int i = 0; i < args.length; i++) {
                if (!(args[i] instanceof KernelArray in)) {
                    continue;
                }
                KernelArray e = (KernelArray) expected[i];
                KernelArray a = (KernelArray) actual[i];
                if (spec.name().startsWith("sumOfSquares") && m.getParameters()[i].getName().equals("result")) {
                    double exact = 0;
                    KernelArray x = (KernelArray) args[1];
                    for (int j = 0; j < n; j++) {
                        double v = floatAt(x, j);
                        exact += v * v;
                    }
                    float got = ((FloatArray) a).get(0);
                    float ref = ((FloatArray) e).get(0);
                    if (Double.isNaN(exact)) { // a NaN among the inputs
                        assertTrue(Float.isNaN(got), where + ": device " + got + ", float64 NaN");
                        assertTrue(Float.isNaN(ref), where + ": Java " + ref + ", float64 NaN");
                    } else if (Float.isInfinite((float) exact)) { // an infinite input or an overflowing sum must say so
                        assertEquals(Float.POSITIVE_INFINITY, got, where + ": device, float64 " + exact);
                        assertEquals(Float.POSITIVE_INFINITY, ref, where + ": Java, float64 " + exact);
                    } else {
                        // the result is an fp32: below its smallest subnormal the sum rounds to 0 (or that subnormal)
                        double tolerance = 1e-5 * exact + Float.MIN_VALUE;
                        assertTrue(Math.abs(got - exact) <= tolerance, where + ": device " + got + " vs float64 " + exact);
                        assertTrue(Math.abs(ref - exact) <= tolerance, where + ": Java " + ref + " vs float64 " + exact);
                    }
                    continue;
                }
                if (a instanceof DoubleArray partials) { // fp64 partial sums (of squares): they must add up to the float64 sum
                    boolean squares = spec.name().startsWith("sumOfSquares");
                    double exact = 0;
                    double magnitude = 0; // what rounding is relative to, also where signs cancel
                    KernelArray x = (KernelArray) args[1];
                    for (int j = 0; j < n; j++) {
                        double v = x instanceof DoubleArray d ? d.get(j) : floatAt(x, j);
                        exact += squares ? v * v : v;
                        magnitude += squares ? v * v : Math.abs(v);
                    }
                    double sum = 0;
                    for (int j = 0; j < partials.getSize(); j++) {
                        sum += partials.get(j);
                    }
                    assertTrue(sum == exact || Double.isNaN(sum) && Double.isNaN(exact) || Math.abs(sum - exact) <= 1e-12 * magnitude, where + ": partials add to " + sum + ", float64 sum " + exact);
                }
                int diff = KernelArgs.firstDifference(e, a);
                if (diff >= 0) {
                    fail(where + ": parameter " + m.getParameters()[i].getName() + " differs at " + diff
                            + ": Java " + floatAt(e, diff) + " vs device " + floatAt(a, diff) + " (input " + floatAt(in, diff) + ")");
                }
                if (e instanceof IntArray flag && spec.name().startsWith("checkFinite")) {
                    boolean anyBad = false;
                    KernelArray x = (KernelArray) java.util.Arrays.stream(args).filter(o -> o instanceof KernelArray).findFirst().orElseThrow();
                    for (int j = 0; j < n; j++) {
                        anyBad |= !Float.isFinite(floatAt(x, j));
                    }
                    assertEquals(anyBad ? 1 : 0, flag.get(0), where + ": finite flag");
                }
            }
        } finally {
            for (Object[] set : new Object[][]{args, expected, actual}) {
                for (Object o : set) {
                    if (o instanceof KernelArray arr) {
                        arr.close();
                    }
                }
            }
        }
    }

    public static float floatAt(KernelArray a, int i) {
        return switch (a) {
            case FloatArray f -> f.get(i);
            case DoubleArray f -> (float) f.get(i);
            case HalfArray h -> h.get(i);
            case Bfloat16Array b -> b.get(i);
            case IntArray x -> x.get(i);
            case LongArray x -> x.get(i);
        };
    }
}
