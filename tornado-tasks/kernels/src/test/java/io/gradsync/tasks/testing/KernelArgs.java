package io.gradsync.tasks.testing;

import io.gradsync.tasks.kernels.internal.JvmKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.compiler.LaunchShape;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelStyle;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Random;
import java.util.SplittableRandom;

/** Test helper: random kernel arguments, deep copies, the JVM reference run, and bitwise comparison. */
public final class KernelArgs {
    /**
     * Values where conversions go wrong first: rounding ties for bf16 and fp16 (to even, both ways),
     * signed zeros, subnormals, fp16 overflow and underflow, extremes.
     */
    private static final float[] EDGES = {
            0f, -0f, 1f, -1f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, Float.MAX_VALUE, -Float.MAX_VALUE,
            Float.intBitsToFloat(0x3F80_8000), Float.intBitsToFloat(0x3F81_8000), Float.intBitsToFloat(0xBF80_8000),
            Float.intBitsToFloat(0x3F80_8001), Float.intBitsToFloat(0x3F81_7FFF), Float.intBitsToFloat(0x7F7F_8000),
            1f + 0x1p-11f, 1f + 3 * 0x1p-11f, -(1f + 0x1p-11f), 65504f, 65519.99f, 65520f, 1e6f, 0x1p-24f, 0x1p-25f,
            0x1.8p-25f, 0x1p-14f, 6.0e-8f, 3.0e-5f, 0.1f, 1f / 3f
    };

    /** 10^-4 .. 10^2: gradient-like magnitudes. */
    private static final double[] POW10 = {1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100};

    private KernelArgs() {
    }

    /** A fresh array of {@code type} with {@code n} elements of random gradient-like values. */
    public static KernelArray random(Class<?> type, int n, Random seeds, double nonFiniteRate) {
        KernelArray a = allocate(type, n);
        // java.util.Random and Math.pow per element made the 16M-element GPU cases take seconds each
        SplittableRandom rnd = new SplittableRandom(seeds.nextLong());
        for (int i = 0; i < n; i++) {
            float v = rnd.nextInt(16) == 0 ? EDGES[rnd.nextInt(EDGES.length)]
                    : (float) (rnd.nextGaussian() * POW10[rnd.nextInt(7)]);
            if (rnd.nextDouble() < nonFiniteRate) {
                v = switch (rnd.nextInt(3)) {
                    case 0 -> Float.NaN;
                    case 1 -> Float.POSITIVE_INFINITY;
                    default -> Float.NEGATIVE_INFINITY;
                };
            }
            setFloat(a, i, v);
        }
        return a;
    }

    /**
     * For sums of squares: a third of the inputs stay finite, a third get a few infinities (the sum
     * must be infinite), a third infinities and one NaN (the sum must be NaN), at random places.
     */
    private static void plantNonFinite(KernelArray x, Random rnd) {
        int mode = rnd.nextInt(3);
        int n = x.getSize();
        for (int j = 0; mode > 0 && j < 3; j++) {
            setFloat(x, rnd.nextInt(n), rnd.nextBoolean() ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY);
        }
        if (mode == 2) {
            setFloat(x, rnd.nextInt(n), Float.NaN);
        }
    }

    public static KernelArray allocate(Class<?> type, int n) {
        if (type == FloatArray.class) {
            return new FloatArray(n);
        } else if (type == DoubleArray.class) {
            return new DoubleArray(n);
        } else if (type == IntArray.class) {
            return new IntArray(n);
        } else if (type == LongArray.class) {
            return new LongArray(n);
        } else if (type == HalfArray.class) {
            return new HalfArray(n);
        } else if (type == Bfloat16Array.class) {
            return new Bfloat16Array(n);
        }
        throw new IllegalArgumentException(type.getName());
    }

    public static void setFloat(KernelArray a, int i, float v) {
        switch (a) {
            case FloatArray f -> f.set(i, v);
            case DoubleArray f -> f.set(i, v);
            case IntArray x -> x.set(i, (int) v);
            case LongArray x -> x.set(i, (long) v);
            case HalfArray h -> h.set(i, v);
            case Bfloat16Array b -> b.set(i, v);
        }
    }

    /**
     * Arguments for a built-in kernel: random inputs of {@code n} elements, write-only outputs
     * poisoned, one-element accumulators ({@code flag}, {@code result}) zeroed, {@code k} = the input count
     * for averages, a random scale otherwise, null for the KernelContext.
     */
    public static Object[] forBuiltin(String name, Method m, CompiledKernel k, int n, Random rnd) {
        java.util.Set<String> read = new java.util.HashSet<>();
        java.util.Set<String> written = new java.util.HashSet<>();
        for (var b : KernelIrs.ir(k).blocks()) {
            for (var insn : b.insns()) {
                switch (insn) {
                    case io.gradsync.tasks.compiler.ir.Insn.Load l -> read.add(l.array().name());
                    case io.gradsync.tasks.compiler.ir.Insn.Store s -> written.add(s.array().name());
                    case io.gradsync.tasks.compiler.ir.Insn.AtomicAdd a -> written.add(a.array().name());
                    default -> {
                    }
                }
            }
        }
        Object[] args = new Object[m.getParameterCount()];
        int inputs = (int) KernelIrs.parameters(k).stream().filter(p -> p.name().matches("a\\d")).count();
        for (var p : KernelIrs.parameters(k)) {
            Class<?> type = m.getParameterTypes()[p.javaIndex()];
            switch (p) {
                case io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam a when a.name().equals("flag") || a.name().equals("result") ->
                        args[p.javaIndex()] = allocate(type, 1);
                case io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam a when a.name().equals("partials") -> {
                    // fewer slots than elements, not a round number; even where n is (the 16-bit kernels pair even slots)
                    KernelArray partials = allocate(type, Math.min(n, (n & 1) == 0 ? 3002 : 3001));
                    poison(partials);
                    args[p.javaIndex()] = partials;
                }
                case io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam a -> {
                    double nonFinite = name.startsWith("checkFinite") && rnd.nextBoolean() ? 1e-3 : 0;
                    KernelArray arr = random(type, n, rnd, nonFinite);
                    if (name.startsWith("sumOfSquares") && !written.contains(a.name())) {
                        plantNonFinite(arr, rnd);
                    }
                    if (written.contains(a.name()) && !read.contains(a.name())) {
                        poison(arr);
                    }
                    args[p.javaIndex()] = arr;
                }
                case io.gradsync.tasks.compiler.ir.KernelParam.ScalarParam s ->
                        args[p.javaIndex()] = inputs > 0 ? (float) inputs : (float) rnd.nextGaussian();
                case io.gradsync.tasks.compiler.ir.KernelParam.ContextParam c -> args[p.javaIndex()] = null;
            }
        }
        return args;
    }

    /** Fills with NaN (floats) or a marker (ints) so that an element the kernel forgets to write shows. */
    public static void poison(KernelArray a) {
        for (int i = 0; i < a.getSize(); i++) {
            switch (a) {
                case IntArray x -> x.set(i, 0xDEAD);
                case LongArray x -> x.set(i, 0xDEADL);
                default -> setFloat(a, i, Float.NaN);
            }
        }
    }

    public static KernelArray copy(KernelArray a) {
        KernelArray c = allocate(a.getClass(), a.getSize());
        c.segment().copyFrom(a.segment());
        return c;
    }

    public static Object[] deepCopy(Object[] args) {
        Object[] c = args.clone();
        for (int i = 0; i < c.length; i++) {
            if (c[i] instanceof KernelArray a) {
                c[i] = copy(a);
            }
        }
        return c;
    }

    /** Runs the Java method itself as the device would, with {@code globalSize} threads for the KernelContext style. */
    public static void runOnJvm(Method m, CompiledKernel k, Object[] args, int globalSize, int localSize) {
        globalSize = Math.max(1, globalSize); // a non-KernelContext kernel runs once, whatever its launch
        localSize = Math.max(1, localSize);
        int grid = (globalSize + localSize - 1) / localSize;
        runOnJvm(m, k, args, new LaunchShape(grid, localSize, 1, 1, 1, 1, globalSize, 1, 1));
    }

    /**
     * The Java method itself over {@code shape}, as JVM devices run it but never by a built-in's JVM
     * form ({@link JvmKernels#runAsWritten}); {@code args} has null at a KernelContext.
     */
    public static void runOnJvm(Method m, CompiledKernel k, Object[] args, LaunchShape shape) {
        m.setAccessible(true);
        java.util.List<Object> given = new java.util.ArrayList<>();
        for (int i = 0; i < m.getParameterCount(); i++) {
            if (m.getParameterTypes()[i] != KernelContext.class) {
                given.add(args[i]);
            }
        }
        try {
            JvmKernels.runAsWritten(new KernelSpec(m.getName(), m, k == null ? (hasContext(m) ? KernelStyle.CONTEXT : KernelStyle.SERIAL) : k.style(), 0),
                    shape, given.toArray());
        } catch (RuntimeException e) {
            throw new AssertionError("JVM reference run of " + m + " failed", e);
        }
    }

    private static boolean hasContext(Method m) {
        return java.util.Arrays.asList(m.getParameterTypes()).contains(KernelContext.class);
    }

    /** Index of the first element whose bits differ (any NaN equals any NaN), or -1. */
    public static int firstDifference(KernelArray a, KernelArray b) {
        long m = a.segment().mismatch(b.segment());
        if (m < 0) {
            return -1; // bit-identical: the common case, without a loop per element
        }
        int elementBytes = (int) (a.segment().byteSize() / Math.max(1, a.getSize()));
        for (int i = (int) (m / Math.max(1, elementBytes)); i < a.getSize(); i++) {
            boolean same = switch (a) {
                case FloatArray x -> sameFloat(x.get(i), ((FloatArray) b).get(i));
                case DoubleArray x -> Double.isNaN(x.get(i)) ? Double.isNaN(((DoubleArray) b).get(i))
                        : Double.doubleToRawLongBits(x.get(i)) == Double.doubleToRawLongBits(((DoubleArray) b).get(i));
                case HalfArray x -> sameFloat(x.get(i), ((HalfArray) b).get(i)) && (Float.isNaN(x.get(i)) || x.getBits(i) == ((HalfArray) b).getBits(i));
                case Bfloat16Array x -> sameFloat(x.get(i), ((Bfloat16Array) b).get(i)) && (Float.isNaN(x.get(i)) || x.getBits(i) == ((Bfloat16Array) b).getBits(i));
                case IntArray x -> x.get(i) == ((IntArray) b).get(i);
                case LongArray x -> x.get(i) == ((LongArray) b).get(i);
            };
            if (!same) {
                return i;
            }
        }
        return -1;
    }

    private static boolean sameFloat(float x, float y) {
        return Float.isNaN(x) ? Float.isNaN(y) : Float.floatToRawIntBits(x) == Float.floatToRawIntBits(y);
    }
}
