package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.SixteenBitFloatArray;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.function.IntToDoubleFunction;
import java.util.stream.IntStream;

/**
 * What JVM devices run for the built-in reductions: a GPU kernel's thread per element, waiting
 * at barriers for its group, is the slowest way to run on a CPU, so the JVM takes one chunk per
 * core and adds the chunks in order. The results are the kernels': the same flag, and the sum of
 * squares accumulated in fp64 and added to {@code result[0]} once as a float (the kernels add one
 * float per group, in no fixed order).
 */
final class JvmForms {
    /** Elements per chunk at least: smaller work is not worth a task of its own. */
    private static final int MIN_CHUNK = 1 << 16;

    private JvmForms() {
    }

    /** The JVM form of built-in {@code kernel}, or null when it runs as itself. */
    static Method of(Method kernel) {
        Class<?>[] types = Arrays.stream(kernel.getParameterTypes()).filter(t -> t != KernelContext.class).toArray(Class<?>[]::new);
        try {
            return JvmForms.class.getDeclaredMethod(kernel.getName(), types);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** The chunk results of {@link #chunks}{@code (n)} chunks, added in chunk order. */
    private static double inChunks(int n, IntToDoubleFunction chunk) {
        int chunks = chunks(n);
        double[] parts = new double[chunks];
        IntStream.range(0, chunks).parallel().forEach(c -> parts[c] = chunk.applyAsDouble(c));
        double total = 0;
        for (double p : parts) {
            total += p;
        }
        return total;
    }

    private static int from(int n, int chunks, int c) {
        return (int) ((long) n * c / chunks);
    }

    static void sumOfSquares(FloatArray x, FloatArray result) {
        int n = x.getSize();
        int chunks = chunks(n);
        double total = inChunks(n, c -> {
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            int i = from(n, chunks, c);
            int to = from(n, chunks, c + 1);
            for (; i + 3 < to; i += 4) {
                double v0 = x.get(i), v1 = x.get(i + 1), v2 = x.get(i + 2), v3 = x.get(i + 3);
                s0 += v0 * v0;
                s1 += v1 * v1;
                s2 += v2 * v2;
                s3 += v3 * v3;
            }
            for (; i < to; i++) {
                double v = x.get(i);
                s0 += v * v;
            }
            return (s0 + s1) + (s2 + s3);
        });
        result.set(0, result.get(0) + (float) total);
    }

    static void sumOfSquaresBf16(Bfloat16Array x, FloatArray result) {
        sumOfSquares16(x, result);
    }

    static void sumOfSquaresF16(HalfArray x, FloatArray result) {
        sumOfSquares16(x, result);
    }

    private static void sumOfSquares16(SixteenBitFloatArray x, FloatArray result) {
        int n = x.getSize();
        int chunks = chunks(n);
        double total = inChunks(n, c -> {
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            int i = from(n, chunks, c);
            int to = from(n, chunks, c + 1);
            for (; i + 3 < to; i += 4) {
                double v0 = x.get(i), v1 = x.get(i + 1), v2 = x.get(i + 2), v3 = x.get(i + 3);
                s0 += v0 * v0;
                s1 += v1 * v1;
                s2 += v2 * v2;
                s3 += v3 * v3;
            }
            for (; i < to; i++) {
                double v = x.get(i);
                s0 += v * v;
            }
            return (s0 + s1) + (s2 + s3);
        });
        result.set(0, result.get(0) + (float) total);
    }

    static void checkFinite(FloatArray x, IntArray flag) {
        int n = x.getSize();
        int chunks = chunks(n);
        boolean bad = inChunks(n, c -> {
            int m = 0;
            for (int i = from(n, chunks, c), to = from(n, chunks, c + 1); i < to; i++) {
                m = Math.max(m, Float.floatToRawIntBits(x.get(i)) & 0x7fffffff);
            }
            return m >= 0x7f800000 ? 1 : 0;
        }) > 0;
        if (bad) {
            flag.set(0, 1);
        }
    }

    static void checkFiniteBf16(Bfloat16Array x, IntArray flag) {
        checkFinite16(x, flag, 0x7f80);
    }

    static void checkFiniteF16(HalfArray x, IntArray flag) {
        checkFinite16(x, flag, 0x7c00);
    }

    /** Non-finite: magnitude bits at or above {@code infinity}'s (exponent all ones). */
    private static void checkFinite16(SixteenBitFloatArray x, IntArray flag, int infinity) {
        int n = x.getSize();
        int chunks = chunks(n);
        boolean bad = inChunks(n, c -> {
            int m = 0;
            for (int i = from(n, chunks, c), to = from(n, chunks, c + 1); i < to; i++) {
                m = Math.max(m, x.getBits(i) & 0x7fff);
            }
            return m >= infinity ? 1 : 0;
        }) > 0;
        if (bad) {
            flag.set(0, 1);
        }
    }

    private static int chunks(int n) {
        return Math.max(1, Math.min(Runtime.getRuntime().availableProcessors() * 4, n / MIN_CHUNK));
    }
}
