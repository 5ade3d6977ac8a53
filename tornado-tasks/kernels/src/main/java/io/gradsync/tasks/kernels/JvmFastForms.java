package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.kernels.internal.CoreSpread;
import io.gradsync.tasks.kernels.internal.Lanes;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;

/**
 * What the JVM fast forms of the built-in kernels share: finding a kernel's form (each family's
 * sits beside it: {@link AverageJvmForm}, {@link ElementwiseJvmForm}, {@link ConversionJvmForm},
 * {@link ReductionJvmForm}), the class-loading warm-up, and the chunked-segment machinery: the
 * per-type loads and stores ({@link Type}) and one call's scratch ({@link Chunk}). A form does the
 * kernel's arithmetic in the same order, so it gives the same bits (NaN payloads aside, which no
 * form of a kernel pins down) as the kernel method, which stays the reference and the source of the
 * device forms.
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
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    /**
     * Elements per chunk: few enough that the scratch (15 KiB) stays in L1 beside the lines streaming
     * through. A constant, so that C2 sees the two halves of a bf16 chunk apart.
     */
    static final int CHUNK = 512;
    static final int HALF = CHUNK / 2;
    /**
     * The most elements per task where an element-wise form runs on every core: enough that a task
     * costs little beside its work (shorter ones left the 16-bit conversions slow at times on 2
     * cores); {@link #sliceLength} takes fewer only to give each core four or more.
     */
    static final int SPREAD_CHUNK = 128 * 1024;
    /** The fewest elements per task where slices shorter than {@link #SPREAD_CHUNK} share many cores. */
    static final int SHORTEST_SLICE = 16 * 1024;

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

    /** The fast form of every kernel that has one, found once. */
    private static final Map<Method, Optional<JvmFastForm>> FORMS = new ConcurrentHashMap<>();

    /** The fast form of {@code kernel} (a built-in kernel's, from its family's form class), or empty. */
    static Optional<JvmFastForm> of(Method kernel) {
        return FORMS.computeIfAbsent(kernel, JvmFastForms::find);
    }

    private static Optional<JvmFastForm> find(Method kernel) {
        Optional<KernelFamily> family = KernelFamily.of(kernel.getDeclaringClass());
        // the bf16 word split assumes little-endian words
        if (family.isEmpty() || ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            return Optional.empty();
        }
        String name = kernel.getName();
        JvmFastForm form = switch (family.get()) {
            case AVERAGES -> AverageJvmForm.of(name);
            case ELEMENTWISE -> ElementwiseJvmForm.of(name);
            case CONVERSIONS -> ConversionJvmForm.of(name);
            case REDUCTIONS -> ReductionJvmForm.of(name);
        };
        if (form == null) {
            return Optional.empty();
        }
        // the arguments a JVM device passes: a KernelContext parameter takes none
        Class<?>[] types = Arrays.stream(kernel.getParameterTypes()).filter(t -> t != KernelContext.class).toArray(Class<?>[]::new);
        if (family.get() == KernelFamily.REDUCTIONS) { // they spread their blocks themselves
            return Optional.of(args -> args.length == types.length && exactTypes(types, args) && form.run(args));
        }
        int written = family.get() == KernelFamily.CONVERSIONS ? 1 : 0; // a conversion is (in, out)
        return Optional.of(args -> args.length == types.length && exactTypes(types, args) && spread(form, written, args));
    }

    /**
     * Runs an element-wise form on every core, a slice of every array a task ({@link #sliceLength}
     * elements), where the arrays are long enough to share and the form applies to them whole
     * (output {@code args[written]}): element {@code i} of the result depends on element {@code i}
     * of the inputs alone, so that slices give what the whole does. How long a slice is (the bytes
     * it moves) decides whether every core is woken at once ({@link CoreSpread#each(int, long,
     * IntConsumer)}). Where the cores may not be shared
     * ({@link CoreSpread#mayShare}) or an array is a confined arena's, the form runs whole on the
     * caller's thread.
     */
    private static boolean spread(JvmFastForm form, int written, Object[] args) {
        KernelArray out = (KernelArray) args[written];
        int n = out.getSize();
        if (n < 2 * SPREAD_CHUNK || !CoreSpread.mayShare() || !CoreSpread.shareable(args)) {
            return form.run(args);
        }
        KernelArray[] others = Arrays.stream(args).filter(a -> a instanceof KernelArray && a != out).toArray(KernelArray[]::new);
        if (!fits(out, others)) {
            return false;
        }
        int length = sliceLength(n, Runtime.getRuntime().availableProcessors());
        int slices = n / length; // the last one takes the rest
        IntConsumer task = c -> {
            int from = c * length;
            int to = c == slices - 1 ? n : from + length;
            if (!form.run(slice(args, from, to))) {
                throw new IllegalStateException("a slice of arrays the form takes whole was refused"); // fits() says otherwise
            }
        };
        long bytesPerElement = out.elementBytes();
        for (KernelArray a : others) {
            bytesPerElement += a.elementBytes();
        }
        CoreSpread.each(slices, bytesPerElement * length, task);
        return true;
    }

    /**
     * Elements per slice of {@code n} on {@code cores} cores: {@link #SPREAD_CHUNK}, or fewer where
     * that would leave fewer than four slices a core (a core left with one slice more than the
     * others then costs the launch a quarter, not a whole slice), down to {@link #SHORTEST_SLICE};
     * a multiple of {@link #CHUNK}, so that every slice but the last is whole chunks.
     */
    static int sliceLength(int n, int cores) {
        long even = (long) n / (4L * cores);
        return (int) Math.max(SHORTEST_SLICE, Math.min(SPREAD_CHUNK, even / CHUNK * CHUNK));
    }

    /** Elements {@code [from, to)} of every array argument, the others as they are. */
    static Object[] slice(Object[] args, int from, int to) {
        Object[] s = args.clone();
        for (int i = 0; i < s.length; i++) {
            if (s[i] instanceof KernelArray a) {
                s[i] = Type.of(a).wrap(a.segment().asSlice((long) from * a.elementBytes(), (long) (to - from) * a.elementBytes()));
            }
        }
        return s;
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

    /**
     * True if there is a chunk's worth of elements, the first array is writable, and every other
     * array is at least as long and either apart from it or the same memory: then chunk by chunk
     * gives what element by element does.
     */
    static boolean fits(KernelArray out, KernelArray... others) {
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

            /** In lanes where there are, else in a loop C2 vectorizes: a bulk copy a chunk costs more than the chunk's conversion. */
            @Override
            void store(Chunk c, MemorySegment dst, int at, int count) {
                if (Lanes.available()) {
                    Lanes.storeFloats(c.f, count, dst, 4L * at);
                    return;
                }
                float[] v = c.f;
                long base = 4L * at;
                for (int i = 0; i < count; i++) {
                    dst.set(FLOAT, base + 4L * i, v[i]);
                }
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

            // the sums below widen src2 inside their own loop: one pass less over the chunk, and
            // faster on 1 and 2 cores than loadTwo's one loop (bench/RESULTS.md, session 26)

            @Override
            void loadSum(Chunk c, MemorySegment src, MemorySegment src2, int at, int count) {
                weightedSum(c, src, src2, at, count, 1f); // times 1: each float exactly itself
            }

            @Override
            void loadHalfSum(Chunk c, MemorySegment src, MemorySegment src2, int at, int count) {
                weightedSum(c, src, src2, at, count, 0.5f);
            }

            /** {@code c.f[i] = src[i] * w + src2[i] * w}. */
            private void weightedSum(Chunk c, MemorySegment src, MemorySegment src2, int at, int count, float w) {
                float[] x = c.f;
                load(c, src, at, count, x, c.fView);
                long base = 2L * at;
                for (int i = 0; i < count; i++) {
                    x[i] = x[i] * w + Float.float16ToFloat(src2.get(SHORT, base + 2L * i)) * w;
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
                    int even = AverageJvmForm.bf16OfNear(b[p], s[p]);
                    int odd = AverageJvmForm.bf16OfNear(b[HALF + p], s[HALF + p]);
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

        /** {@code c.f[i] = src[i] + src2[i]} in fp32 for the chunk's elements {@code at .. at + count - 1}. */
        void loadSum(Chunk c, MemorySegment src, MemorySegment src2, int at, int count) {
            loadTwo(c, src, src2, at, count);
            c.addFloats();
        }

        /**
         * {@code c.f[i] = src[i] * 0.5f + src2[i] * 0.5f} in fp32: for two 16-bit replicas and
         * {@code k = 2}, a float that rounds to the 16-bit type as the kernel's quotient does. The
         * halves are exact floats (the 16-bit types' smallest subnormals are 2^-133 and 2^-24), and
         * so is their sum where the two exponents are at most 16 (bf16) or 13 (fp16) apart: it then
         * has at most 24 significant bits. Further apart, the smaller half is too small to move the
         * larger one to the nearest point halfway between two 16-bit values, and the float sum is
         * not one of those points either: both round to the larger half. Neither sum overflows.
         */
        void loadHalfSum(Chunk c, MemorySegment src, MemorySegment src2, int at, int count) {
            loadTwo(c, src, src2, at, count);
            c.halfSumFloats();
        }

        /** Elements {@code at .. at + count - 1} of {@code src}, widened to fp32, into {@code dst} (viewed by {@code dstView}). */
        abstract void load(Chunk c, MemorySegment src, int at, int count, float[] dst, MemorySegment dstView);

        /** The chunk's floats {@code c.f}, narrowed, into elements {@code at .. at + count - 1} of {@code dst}. */
        abstract void store(Chunk c, MemorySegment dst, int at, int count);

        /** As {@link #store}, the floats {@link AverageJvmForm#divideToNearest} left, first rounded to odd. */
        void storeRoundedToOdd(Chunk c, MemorySegment dst, int at, int count) {
            AverageJvmForm.roundToOdd(c);
            MemorySegment.copy(c.bitsView, 0, c.fView, 0, 4L * CHUNK);
            store(c, dst, at, count);
        }

        /** {@code s} as an array of this type. */
        KernelArray wrap(MemorySegment s) {
            return switch (this) {
                case F32 -> FloatArray.wrap(s);
                case F16 -> HalfArray.wrap(s);
                case BF16 -> Bfloat16Array.wrap(s);
            };
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

    /**
     * One call's scratch: a chunk in heap arrays, with byte views for the bulk copies, and the passes
     * over it that several families use (the averages' own are {@link AverageJvmForm}'s). Passes
     * run over the whole chunk, so that what a shorter chunk leaves past its end is never stored.
     */
    static final class Chunk {
        /** Each thread's: zeroing a new one costs a short call more than its work (a form never nests). */
        private static final ThreadLocal<Chunk> OWN = ThreadLocal.withInitial(Chunk::new);

        static Chunk ofThisThread() {
            return OWN.get();
        }

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
        /** Two floats a long: a bf16 conversion's floats in element order ({@link ConversionJvmForm}). */
        final long[] longs = new long[HALF];
        final MemorySegment longsView = MemorySegment.ofArray(longs);
        final MemorySegment errView = MemorySegment.ofArray(err);
        final MemorySegment errBitsView = MemorySegment.ofArray(errBits);

        /** {@code f[i] = f[i] * 0.5f + f2[i] * 0.5f} ({@link Type#loadHalfSum} says why it is the 16-bit average of two). */
        void halfSumFloats() {
            float[] a = f;
            float[] b = f2;
            for (int i = 0; i < CHUNK; i++) {
                a[i] = a[i] * 0.5f + b[i] * 0.5f;
            }
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
    }
}
