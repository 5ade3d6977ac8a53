package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.testing.KernelArgs;
import io.gradsync.tasks.testing.PoclRunner;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every built-in kernel, on fresh random inputs, run as plain Java (the reference) and as the
 * generated OpenCL C on the local OpenCL device (PoCL in CI): outputs are poisoned first and must
 * match bit for bit (sums of squares, whose atomic order differs, within a tolerance and against
 * float64).
 */
class OpenClDifferentialTest {
    private static final int LOCAL = 64;
    private static PoclRunner cl;

    @BeforeAll
    static void needOpenCl() {
        cl = PoclRunner.sharedOrNull();
        assumeTrue(cl != null, "no OpenCL platform: OpenCL differential tests skipped");
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (KernelSpec spec : BuiltinKernels.all()) {
            // size 1, sizes that are not multiples of the group size, and a large size
            for (int n : new int[]{1, 1000, 4099, 1 << 20 | 3}) {
                // one thread per element (rounded up) and fewer threads than elements (grid stride)
                for (int threads : new int[]{roundUp(n, LOCAL), 256}) {
                    if (spec.name().startsWith("average") && n == (1 << 20 | 3) && !spec.name().matches("average[28].*")) {
                        continue; // large size for k = 2 and 8 only: the others add run time, not coverage
                    }
                    cases.add(Arguments.of(spec, n, threads));
                }
            }
        }
        return cases.stream();
    }

    static int roundUp(int n, int m) {
        return (n + m - 1) / m * m;
    }

    @ParameterizedTest(name = "{0} n={1} threads={2}")
    @MethodSource("cases")
    void openClMatchesJava(KernelSpec spec, int n, int threads) {
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
        cl.run(k, actual, threads, LOCAL);

        String where = spec.name() + " n=" + n + " threads=" + threads + " seed=" + seed;
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
                assertTrue(Math.abs(got - exact) <= 1e-5 * exact, where + ": OpenCL " + got + " vs float64 " + exact);
                assertTrue(Math.abs(ref - exact) <= 1e-5 * exact, where + ": Java " + ref + " vs float64 " + exact);
                continue;
            }
            int diff = KernelArgs.firstDifference(e, a);
            if (diff >= 0) {
                fail(where + ": parameter " + m.getParameters()[i].getName() + " differs at " + diff
                        + ": Java " + floatAt(e, diff) + " vs OpenCL " + floatAt(a, diff) + " (input " + floatAt(in, diff) + ")");
            }
            if (e instanceof IntArray flag && spec.name().startsWith("checkFinite")) {
                boolean anyBad = false;
                KernelArray x = (KernelArray) args[0];
                for (int j = 0; j < n; j++) {
                    anyBad |= !Float.isFinite(floatAt(x, j));
                }
                assertEquals(anyBad ? 1 : 0, flag.get(0), where + ": finite flag");
            }
        }
        for (Object o : args) {
            if (o instanceof KernelArray arr) {
                arr.close();
            }
        }
    }

    private static float floatAt(KernelArray a, int i) {
        return switch (a) {
            case io.gradsync.tasks.api.FloatArray f -> f.get(i);
            case io.gradsync.tasks.api.HalfArray h -> h.get(i);
            case io.gradsync.tasks.api.Bfloat16Array b -> b.get(i);
            case IntArray x -> x.get(i);
            case io.gradsync.tasks.api.LongArray x -> x.get(i);
        };
    }

    @SuppressWarnings("unused")
    private static final Class<?> CONTEXT = KernelContext.class;
}
