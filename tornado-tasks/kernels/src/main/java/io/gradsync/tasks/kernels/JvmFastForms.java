package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelArray;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.nio.ByteOrder;

/**
 * JVM-only forms of the fused averages, the element-wise 16-bit kernels and the conversions of
 * {@link GradientKernels} (the reductions' are {@link JvmReductions}): the same arithmetic in the same order, so the same bits (NaN payloads
 * aside, which no form of a kernel pins down), as the kernel methods, which stay the reference and
 * the source of the device forms.
 *
 * <p>Why: C2 does not vectorize a loop over several memory segments (it cannot rule out that they
 * overlap), so as plain Java every element costs a scalar division and, for 16-bit types, some
 * twenty scalar conversion and rounding steps; and an average streams all its inputs at once, at
 * the same page offset as large allocations are, so that they compete for the same cache sets.
 * Here the arrays go through heap arrays a chunk at a time, two inputs at a time, in passes that
 * C2 vectorizes (each reads or writes one memory segment at most). Reinterpreting bits
 * ({@code Float.floatToRawIntBits} and the like, which C2 does not vectorize) is a bulk copy
 * between heap arrays.
 *
 * <p>bf16 chunks are de-interleaved: a 32-bit word holds two bf16 values, whose float bits are its
 * low half shifted up and its high half masked, so element {@code 2p} of a chunk sits at {@code p}
 * and element {@code 2p + 1} at {@code HALF + p}, in every array of the kernel alike.
 */
final class JvmFastForms {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    /**
     * Elements per chunk: few enough that the scratch (15 KiB) stays in L1 beside the lines streaming
     * through. A constant, so that C2 sees the two halves of a bf16 chunk apart.
     */
    static final int CHUNK = 512;
    static final int HALF = CHUNK / 2;

    /** Runs a kernel's fast form; false where it does not apply (the caller then runs the kernel). */
    interface Form {
        boolean run(Object[] args);
    }

    static {
        // Every kind of memory segment and array class loaded before any form is compiled: C2
        // compiles a call on a MemorySegment or KernelArray as the one implementation it has seen
        // loaded, and loading another (the first heap segment of doubles, the first fp16 array)
        // throws away all such compiled code at once, which then runs interpreted until C2 gets to
        // it again: seconds, with every core busy.
        MemorySegment.ofArray(new byte[1]);
        MemorySegment.ofArray(new short[1]);
        MemorySegment.ofArray(new char[1]);
        MemorySegment.ofArray(new int[1]);
        MemorySegment.ofArray(new float[1]);
        MemorySegment.ofArray(new long[1]);
        MemorySegment.ofArray(new double[1]);
        for (Class<?> c : KernelArray.class.getPermittedSubclasses()) {
            try {
                MethodHandles.lookup().ensureInitialized(c);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private JvmFastForms() {
    }

    /** The fast form of {@code kernel}, or null if it has none. */
    static Form of(Method kernel) {
        // the bf16 word split assumes little-endian words
        if (kernel.getDeclaringClass() != GradientKernels.class || ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            return null;
        }
        String name = kernel.getName();
        Form form = switch (name) {
            case "sumIntoBf16", "sumIntoF16" -> JvmFastForms::sumInto;
            case "scaleBf16" -> JvmFastForms::scale; // scaleF16 reads one segment: C2 vectorizes the kernel itself
            case "copyBf16", "copyF16" -> JvmFastForms::copy;
            case "bf16ToF32", "f16ToF32", "f32ToBf16", "f32ToF16" -> JvmFastForms::convert;
            default -> name.matches("average[3-8]|average[2-8](Bf16|F16)") ? JvmFastForms::average : JvmReductions.of(name);
        };
        // the arguments a JVM device passes: a KernelContext parameter takes none
        Class<?>[] types = java.util.Arrays.stream(kernel.getParameterTypes()).filter(t -> t != io.gradsync.tasks.api.KernelContext.class)
                .toArray(Class<?>[]::new);
        return form == null ? null : args -> args.length == types.length && exactTypes(types, args) && form.run(args);
    }

    /** True if every argument has its parameter's own type (a Float for a float), as the forms take them. */
    private static boolean exactTypes(Class<?>[] types, Object[] args) {
        for (int i = 0; i < types.length; i++) {
            if (!(types[i] == float.class ? args[i] instanceof Float : types[i].isInstance(args[i]))) {
                return false;
            }
        }
        return true;
    }

    /** {@code acc[i] = acc[i] + x[i]}, in fp32. */
    private static boolean sumInto(Object[] args) {
        KernelArray acc = (KernelArray) args[0];
        KernelArray x = (KernelArray) args[1];
        if (!fits(acc, x)) {
            return false;
        }
        Type t = Type.of(acc);
        Chunk c = new Chunk();
        for (int at = 0; at < acc.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, acc.getSize() - at);
            t.loadTwo(c, acc.segment(), x.segment(), at, count);
            c.addFloats();
            t.store(c, acc.segment(), at, count);
        }
        return true;
    }

    /** {@code x[i] = x[i] * s}, in fp32. */
    private static boolean scale(Object[] args) {
        KernelArray x = (KernelArray) args[0];
        float s = (Float) args[1];
        if (!fits(x)) {
            return false;
        }
        Type t = Type.of(x);
        Chunk c = new Chunk();
        for (int at = 0; at < x.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, x.getSize() - at);
            t.load(c, x.segment(), at, count, c.f, c.fView);
            c.scale(s);
            t.store(c, x.segment(), at, count);
        }
        return true;
    }

    /** {@code out[i] = in[i]}, through fp32 as the kernel goes (a NaN comes out quiet). */
    private static boolean copy(Object[] args) {
        return transfer((KernelArray) args[1], (KernelArray) args[0]);
    }

    /** {@code out[i] = in[i]} between the float types, widened or rounded to nearest even as the kernels' {@code set}. */
    private static boolean convert(Object[] args) {
        return transfer((KernelArray) args[0], (KernelArray) args[1]);
    }

    private static boolean transfer(KernelArray in, KernelArray out) {
        if (!fits(out, in)) {
            return false;
        }
        Type from = Type.of(in);
        Type to = Type.of(out);
        Chunk c = new Chunk();
        for (int at = 0; at < out.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, out.getSize() - at);
            from.load(c, in.segment(), at, count, c.f, c.fView);
            if (from == Type.BF16 && to != Type.BF16) {
                c.unsplit(); // bf16 chunks hold even elements, then odd ones
            } else if (to == Type.BF16 && from != Type.BF16) {
                c.split();
            }
            to.store(c, out.segment(), at, count);
        }
        return true;
    }

    /**
     * {@code out[i]} = the float64 sum of {@code a0[i] .. a(k-1)[i]} in replica order, divided by
     * {@code k}, rounded once: to fp32 directly, to bf16 / fp16 through {@link HalfFloats#roundToOdd}.
     */
    private static boolean average(Object[] args) {
        KernelArray out = (KernelArray) args[0];
        KernelArray[] in = new KernelArray[args.length - 2];
        for (int j = 0; j < in.length; j++) {
            in[j] = (KernelArray) args[j + 1];
        }
        double k = (Float) args[args.length - 1]; // the kernel divides the double sum by the float k
        if (!fits(out, in)) {
            return false;
        }
        Type t = Type.of(out);
        Sum sum = in.length == 2 ? Sum.TWO : in.length == 3 ? Sum.THREE : in.length % 2 == 0 ? Sum.ACC_TWO : Sum.ACC;
        boolean halves = t != Type.F32 && sum == Sum.TWO && k == 2;
        Chunk c = new Chunk();
        for (int at = 0; at < out.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, out.getSize() - at);
            t.loadTwo(c, in[0].segment(), in[1].segment(), at, count);
            if (sum == Sum.THREE) {
                t.load(c, in[2].segment(), at, count, c.f3, c.f3View);
            } else if (sum != Sum.TWO) {
                c.sumFirstTwo();
                int rest = sum == Sum.ACC_TWO ? in.length - 2 : in.length - 1; // the replicas the division's pass adds
                for (int j = 2; j < rest; j += 2) { // those between, two at a time (an even count)
                    t.loadTwo(c, in[j].segment(), in[j + 1].segment(), at, count);
                    c.addTwo();
                }
                if (sum == Sum.ACC_TWO) {
                    t.loadTwo(c, in[rest].segment(), in[rest + 1].segment(), at, count);
                } else {
                    t.load(c, in[rest].segment(), at, count, c.f, c.fView);
                }
            }
            if (t == Type.F32) {
                c.divide(k, sum);
                t.store(c, out.segment(), at, count);
            } else if (halves) {
                c.halfSum();
                t.store(c, out.segment(), at, count);
            } else {
                c.divideToNearest(k, sum);
                t.storeRoundedToOdd(c, out.segment(), at, count);
            }
        }
        return true;
    }

    /**
     * True if there is a chunk's worth of elements, the first array is writable, and every other
     * array is at least as long and either apart from it or the same memory: then chunk by chunk
     * gives what element by element does.
     */
    private static boolean fits(KernelArray out, KernelArray... others) {
        MemorySegment o = out.segment();
        if (out.getSize() < CHUNK || o.isReadOnly()) {
            return false; // a short array is as quick as the kernel
        }
        for (KernelArray a : others) {
            MemorySegment s = a.segment();
            if (a.getSize() < out.getSize() || (s.asOverlappingSlice(o).isPresent() && s.address() != o.address())) {
                return false;
            }
        }
        return true;
    }

    /** {@code 1 / k} where multiplying by it rounds as dividing by {@code k} does (a power of two), else 0. */
    static double exactReciprocal(double k) {
        return Double.isFinite(k) && Math.abs(k) == Math.scalb(1.0, Math.getExponent(k)) ? 1 / k : 0;
    }

    /**
     * How each element type moves between its memory and a chunk's floats, converting as the
     * array's {@code get} and {@code set} do. A class per type, so that each keeps its own profile.
     * Passes run over the whole chunk; only {@code count} elements are read and written, 16-bit ones
     * in loops that touch one memory segment only, which C2 vectorizes.
     */
    enum Type {
        F32 {
            @Override
            void load(Chunk c, MemorySegment src, int at, int count, float[] dst, MemorySegment dstView) {
                MemorySegment.copy(src, 4L * at, dstView, 0, 4L * count);
            }

            @Override
            void store(Chunk c, MemorySegment dst, int at, int count) {
                MemorySegment.copy(c.fView, 0, dst, 4L * at, 4L * count);
            }
        },
        F16 {
            @Override
            void load(Chunk c, MemorySegment src, int at, int count, float[] dst, MemorySegment dstView) {
                long base = 2L * at;
                for (int i = 0; i < count; i++) {
                    dst[i] = Float.float16ToFloat(src.get(SHORT, base + 2L * i));
                }
            }

            @Override
            void loadTwo(Chunk c, MemorySegment src, MemorySegment src2, int at, int count) {
                float[] x = c.f;
                float[] y = c.f2;
                long base = 2L * at;
                for (int i = 0; i < count; i++) {
                    x[i] = Float.float16ToFloat(src.get(SHORT, base + 2L * i));
                    y[i] = Float.float16ToFloat(src2.get(SHORT, base + 2L * i));
                }
            }

            @Override
            void store(Chunk c, MemorySegment dst, int at, int count) {
                float[] v = c.f;
                long base = 2L * at;
                for (int i = 0; i < count; i++) {
                    dst.set(SHORT, base + 2L * i, Float.floatToFloat16(v[i]));
                }
            }
        },
        BF16 {
            @Override
            void load(Chunk c, MemorySegment src, int at, int count, float[] dst, MemorySegment dstView) {
                int[] b = c.bits;
                long base = 2L * at;
                for (int p = 0; p < count / 2; p++) {
                    int w = src.get(INT, base + 4L * p);
                    b[p] = w << 16;
                    b[HALF + p] = w & 0xFFFF_0000;
                }
                if (count % 2 != 0) {
                    b[count / 2] = src.get(SHORT, base + 2L * (count - 1)) << 16;
                }
                MemorySegment.copy(c.bitsView, 0, dstView, 0, 4L * CHUNK);
            }

            @Override
            void loadTwo(Chunk c, MemorySegment src, MemorySegment src2, int at, int count) {
                int[] b = c.bits;
                int[] b2 = c.bits2;
                long base = 2L * at;
                for (int p = 0; p < count / 2; p++) {
                    int w = src.get(INT, base + 4L * p);
                    int w2 = src2.get(INT, base + 4L * p);
                    b[p] = w << 16;
                    b[HALF + p] = w & 0xFFFF_0000;
                    b2[p] = w2 << 16;
                    b2[HALF + p] = w2 & 0xFFFF_0000;
                }
                if (count % 2 != 0) {
                    b[count / 2] = src.get(SHORT, base + 2L * (count - 1)) << 16;
                    b2[count / 2] = src2.get(SHORT, base + 2L * (count - 1)) << 16;
                }
                MemorySegment.copy(c.bitsView, 0, c.fView, 0, 4L * CHUNK);
                MemorySegment.copy(c.bits2View, 0, c.f2View, 0, 4L * CHUNK);
            }

            @Override
            void store(Chunk c, MemorySegment dst, int at, int count) {
                MemorySegment.copy(c.fView, 0, c.bitsView, 0, 4L * CHUNK);
                int[] w = c.words;
                int[] b = c.bits;
                for (int p = 0; p < HALF; p++) {
                    w[p] = (HalfFloats.bf16InHighHalf(b[p]) >>> 16) | (HalfFloats.bf16InHighHalf(b[HALF + p]) & 0xFFFF_0000);
                }
                MemorySegment.copy(c.wordsView, 0, dst, 2L * at, 2L * count);
            }

            @Override
            void storeRoundedToOdd(Chunk c, MemorySegment dst, int at, int count) {
                int[] w = c.words;
                int[] b = c.bits;
                int[] s = c.errBits;
                for (int p = 0; p < HALF; p++) { // the step to odd and the narrowing in one pass
                    int even = Chunk.bf16OfNear(b[p], s[p]);
                    int odd = Chunk.bf16OfNear(b[HALF + p], s[HALF + p]);
                    w[p] = (even >>> 16) | (odd & 0xFFFF_0000);
                }
                MemorySegment.copy(c.wordsView, 0, dst, 2L * at, 2L * count);
            }
        };

        /**
         * As {@link #load} twice, {@code src} into {@code c.f} and {@code src2} into {@code c.f2}; the
         * 16-bit types read both in one loop, which has twice the reads in flight.
         */
        void loadTwo(Chunk c, MemorySegment src, MemorySegment src2, int at, int count) {
            load(c, src, at, count, c.f, c.fView);
            load(c, src2, at, count, c.f2, c.f2View);
        }

        /** Elements {@code at .. at + count - 1} of {@code src}, widened to fp32, into {@code dst} (viewed by {@code dstView}). */
        abstract void load(Chunk c, MemorySegment src, int at, int count, float[] dst, MemorySegment dstView);

        /** The chunk's floats {@code c.f}, narrowed, into elements {@code at .. at + count - 1} of {@code dst}. */
        abstract void store(Chunk c, MemorySegment dst, int at, int count);

        /** As {@link #store}, the floats {@link Chunk#divideToNearest} left, first rounded to odd. */
        void storeRoundedToOdd(Chunk c, MemorySegment dst, int at, int count) {
            c.roundToOdd();
            MemorySegment.copy(c.bitsView, 0, c.fView, 0, 4L * CHUNK);
            store(c, dst, at, count);
        }

        static Type of(KernelArray a) {
            return switch (a) {
                case FloatArray x -> F32;
                case HalfArray x -> F16;
                case Bfloat16Array x -> BF16;
                default -> throw new IllegalArgumentException(a.getClass().getSimpleName());
            };
        }
    }

    /** Where an average's sum of replicas is when it is divided: it ends in the division's pass. */
    enum Sum {
        /** {@code f[i] + f2[i]}: two replicas. */
        TWO,
        /** {@code f[i] + f2[i] + f3[i]}: three. */
        THREE,
        /** {@code acc[i] + f[i]}: the sum of all but the last, and the last (an odd count). */
        ACC,
        /** {@code acc[i] + f[i] + f2[i]}: the sum of all but the last two, and those two (an even count). */
        ACC_TWO
    }

    /** One call's scratch: a chunk in heap arrays, with byte views for the bulk copies; the passes over it. */
    static final class Chunk {
        final double[] acc = new double[CHUNK];
        final float[] f = new float[CHUNK];
        final float[] f2 = new float[CHUNK];
        final float[] f3 = new float[CHUNK];
        final int[] bits = new int[CHUNK];
        final int[] bits2 = new int[CHUNK];
        final float[] err = new float[CHUNK];
        final int[] errBits = new int[CHUNK];
        final int[] words = new int[HALF];
        final MemorySegment fView = MemorySegment.ofArray(f);
        final MemorySegment f2View = MemorySegment.ofArray(f2);
        final MemorySegment f3View = MemorySegment.ofArray(f3);
        final MemorySegment bitsView = MemorySegment.ofArray(bits);
        final MemorySegment bits2View = MemorySegment.ofArray(bits2);
        final MemorySegment wordsView = MemorySegment.ofArray(words);
        final MemorySegment errView = MemorySegment.ofArray(err);
        final MemorySegment errBitsView = MemorySegment.ofArray(errBits);

        /** From the bf16 layout (even elements in the first half, odd ones in the second) to element order, in {@code f}. */
        void unsplit() {
            float[] a = f;
            float[] t = f2;
            for (int p = 0; p < HALF; p++) {
                t[2 * p] = a[p];
                t[2 * p + 1] = a[HALF + p];
            }
            System.arraycopy(t, 0, a, 0, CHUNK);
        }

        /** From element order to the bf16 layout, in {@code f}. */
        void split() {
            float[] a = f;
            float[] t = f2;
            for (int p = 0; p < HALF; p++) {
                t[p] = a[2 * p];
                t[HALF + p] = a[2 * p + 1];
            }
            System.arraycopy(t, 0, a, 0, CHUNK);
        }

        /** {@code f[i] = f[i] + f2[i]}. */
        void addFloats() {
            float[] a = f;
            float[] b = f2;
            for (int i = 0; i < CHUNK; i++) {
                a[i] = a[i] + b[i];
            }
        }

        /** {@code f[i] = f[i] * s}. */
        void scale(float s) {
            float[] a = f;
            for (int i = 0; i < CHUNK; i++) {
                a[i] = a[i] * s;
            }
        }

        /** {@code acc[i] = (double) f[i] + f2[i]}: the first two replicas. */
        void sumFirstTwo() {
            double[] a = acc;
            float[] x = f;
            float[] y = f2;
            for (int i = 0; i < CHUNK; i++) {
                a[i] = (double) x[i] + y[i];
            }
        }

        /** {@code acc[i] = acc[i] + f[i] + f2[i]}: the next two replicas, in order. */
        void addTwo() {
            double[] a = acc;
            float[] x = f;
            float[] y = f2;
            for (int i = 0; i < CHUNK; i++) {
                a[i] = a[i] + x[i] + y[i];
            }
        }

        /**
         * {@code f[i] = f[i] * 0.5f + f2[i] * 0.5f}: for two 16-bit replicas and {@code k = 2}, a float
         * that rounds to the 16-bit type as the kernel's quotient does, in float arithmetic. The
         * halves are exact floats (the 16-bit types' smallest subnormals are 2^-133 and 2^-24), and so
         * is their sum where the two exponents are at most 16 (bf16) or 13 (fp16) apart: it then has
         * at most 24 significant bits. Further apart, the smaller half is too small to move the
         * larger one to the nearest point halfway between two 16-bit values, and the float sum is
         * not one of those points either: both round to the larger half. Neither sum overflows.
         */
        void halfSum() {
            float[] a = f;
            float[] b = f2;
            for (int i = 0; i < CHUNK; i++) {
                a[i] = a[i] * 0.5f + b[i] * 0.5f;
            }
        }

        /** {@code acc[i]} = the whole sum of the replicas (see {@link Sum}). */
        void sumIntoAcc(Sum sum) {
            double[] a = acc;
            float[] x = f;
            float[] y = f2;
            float[] z = f3;
            switch (sum) {
                case TWO -> sumFirstTwo();
                case THREE -> {
                    for (int i = 0; i < CHUNK; i++) {
                        a[i] = (double) x[i] + y[i] + z[i];
                    }
                }
                case ACC -> {
                    for (int i = 0; i < CHUNK; i++) {
                        a[i] += x[i];
                    }
                }
                case ACC_TWO -> addTwo();
            }
        }

        /** {@code f[i] = (float) (sum / k)}, the sum of the replicas (see {@link Sum}). */
        void divide(double k, Sum sum) {
            double[] a = acc;
            float[] x = f;
            double r = exactReciprocal(k);
            if (sum == Sum.ACC) {
                for (int i = 0; i < CHUNK; i++) {
                    x[i] = (float) quotient(a[i] + x[i], k, r);
                }
            } else if (sum == Sum.ACC_TWO) {
                float[] y = f2;
                for (int i = 0; i < CHUNK; i++) {
                    x[i] = (float) quotient(a[i] + x[i] + y[i], k, r);
                }
            } else {
                sumIntoAcc(sum);
                for (int i = 0; i < CHUNK; i++) {
                    x[i] = (float) quotient(a[i], k, r);
                }
            }
        }

        /**
         * The first step of {@code HalfFloats.roundToOdd(sum / k)}, the sum of the replicas and
         * a sum of floats (a multiple of 2^-149, as every sum of replicas is): {@code f[i]} and its
         * bits {@code bits[i]} = a float next to the double quotient (the nearest, or the other float
         * around it); {@code errBits[i]} = the bits of a float with the sign of the exact difference,
         * zero where there is none and NaN where it is NaN. {@link #toOdd} is the second step, which
         * only needs the two floats around the quotient.
         *
         * <p>For a whole {@code k} from 1 to 2^20 (the replica counts) there is no division: the float
         * is that of {@code sum * (1 / k)}, and the difference {@code fma(-f, k, sum)}, exact as
         * {@code f * k} is, and a multiple of 2^-149, so that as a float it keeps its sign. Its sign
         * is also the double quotient's: a sum of floats is never within half a double's ulp of
         * {@code f * k} without being equal to it. (Signs as ints cost C2's vector loops twice this.)
         */
        void divideToNearest(double k, Sum sum) {
            double[] a = acc;
            float[] x = f;
            float[] y = f2;
            float[] z = f3;
            float[] e = err;
            if (k >= 1 && k <= 0x1p20 && k == Math.rint(k)) {
                double inverse = 1 / k;
                switch (sum) { // a loop per sum: its first steps fused with the last
                    case TWO -> {
                        for (int i = 0; i < CHUNK; i++) {
                            double s = (double) x[i] + y[i];
                            float n = (float) (s * inverse);
                            x[i] = n;
                            e[i] = (float) Math.fma(-n, k, s);
                        }
                    }
                    case THREE -> {
                        for (int i = 0; i < CHUNK; i++) {
                            double s = (double) x[i] + y[i] + z[i];
                            float n = (float) (s * inverse);
                            x[i] = n;
                            e[i] = (float) Math.fma(-n, k, s);
                        }
                    }
                    case ACC -> {
                        for (int i = 0; i < CHUNK; i++) {
                            double s = a[i] + x[i];
                            float n = (float) (s * inverse);
                            x[i] = n;
                            e[i] = (float) Math.fma(-n, k, s);
                        }
                    }
                    case ACC_TWO -> {
                        for (int i = 0; i < CHUNK; i++) {
                            double s = a[i] + x[i] + y[i];
                            float n = (float) (s * inverse);
                            x[i] = n;
                            e[i] = (float) Math.fma(-n, k, s);
                        }
                    }
                }
            } else {
                sumIntoAcc(sum);
                double r = exactReciprocal(k);
                for (int i = 0; i < CHUNK; i++) {
                    nearest(i, quotient(a[i], k, r));
                }
            }
            MemorySegment.copy(fView, 0, bitsView, 0, 4L * CHUNK);
            MemorySegment.copy(errView, 0, errBitsView, 0, 4L * CHUNK);
        }

        /** {@code bits[i] = toOdd(bits[i], errBits[i])}. */
        void roundToOdd() {
            int[] b = bits;
            int[] s = errBits;
            for (int i = 0; i < CHUNK; i++) {
                b[i] = toOdd(b[i], s[i]);
            }
        }

        /**
         * The float round-to-odd gives, from a float next to the quotient (the nearest, or the other
         * one around it) and the bits of a float with the sign of what it is off by: one step toward
         * the quotient where it is inexact and even. The difference is also NaN for a NaN or infinite
         * quotient, which HalfFloats leaves as they are too; a NaN keeps its payload where a float
         * holds it, as every NaN that sums of floats make does. Integer operations only, for C2's
         * vector loops.
         */
        static int toOdd(int near, int errBits) {
            int m = (errBits & 0x7fff_ffff) - 1;           // 0 .. 0x7f7fffff: nonzero, not NaN
            int inexact = ~(m | (0x7f7f_ffff - m)) >>> 31;
            int away = ((errBits ^ near) >> 31) | 1;         // +1: the quotient is the larger in magnitude
            return near + (away & -(inexact & ~near & 1));  // only an even float moves
        }

        /**
         * {@code HalfFloats.bf16InHighHalf(toOdd(near, errBits))} in fewer steps, for the floats that
         * {@link #divideToNearest} leaves from bf16 replicas: the step to odd changes the bf16 only
         * where the float is a bf16 tie, and there it breaks the tie toward the quotient instead of
         * to even. The difference is NaN only where {@code near} is an infinity, whose bf16 no
         * rounding bias changes, or a NaN, which arithmetic leaves quiet, with its low 16 bits zero
         * as every NaN's made from bf16 values is (payloads move between float and double by their
         * upper bits): the bias then carries into neither the exponent nor the sign, and the NaN
         * stays quiet.
         */
        static int bf16OfNear(int near, int errBits) {
            int e = errBits << 1;                  // zero where the float is the quotient
            int inexact = (e | -e) >> 31;          // all ones where it is not
            int away = ~(errBits ^ near) >>> 31;   // 1: the quotient is the larger in magnitude
            int even = (near >>> 16) & 1;          // ties to even, where exact
            return near + 0x7FFF + (even ^ ((even ^ away) & inexact));
        }

        /** {@code f[i]} = the float nearest {@code d}; {@code err[i]} = the sign of what it is off by, as a float. */
        private void nearest(int i, double d) {
            float n = (float) d;
            f[i] = n;
            err[i] = (float) Math.signum(d - n);
        }

        /** {@code sum / k}; by the product with {@code r} where that is exact (nonzero). */
        private static double quotient(double sum, double k, double r) {
            return r != 0 ? sum * r : sum / k;
        }
    }
}
