package io.gradsync.tasks.kernels.internal;

import java.lang.foreign.MemorySegment;
import java.util.function.LongToDoubleFunction;

/**
 * SIMD lanes for the JVM forms of the averages and the host average, where the JVM has the
 * incubating vector module: {@code java --add-modules jdk.incubator.vector} (the {@code gradsync}
 * launcher, the build's tests and the benchmarks add it). Without it, or with
 * {@code -Dgradsync.lanes=false} (to time both in one run), {@link #available()} is false and the
 * callers' plain loops give the same bits. This class names no vector type, so that it loads
 * everywhere; {@link LaneKernels} (the averages and sums of squares), {@link LaneWords} (16-bit
 * element-wise), {@link PartialsPerStep}, {@link PartialsWholeRows} and {@link PartialsPerSum}
 * (the partials) hold the lanes. Segments are the kernels' arrays from element 0, at least
 * {@code n} elements long.
 *
 * <p>Thread-safety: stateless.
 */
public final class Lanes {
    private static final boolean AVAILABLE = availableHere();
    /**
     * Elements a slot from which the partials run one running sum at a time ({@link PartialsPerSum});
     * below it a step of slots reads every row at once ({@link PartialsPerStep}). At 32 each running
     * sum has four rows, which its pass reads at once; with fewer it reads them one at a time and
     * the steps are faster. {@code -Dgradsync.partials.tallRows} sets it, to time both in one run.
     */
    private static final int TALL = Math.max(1, Integer.getInteger("gradsync.partials.tallRows", 32));

    private Lanes() {
    }

    /**
     * One, in a field the JIT does not fold (not final): a loop whose stride is a multiple of it is
     * not a counted loop to C2, which then neither unrolls it nor hoists its bounds checks. Unrolled,
     * a read-only loop of one short step had its loads scheduled out of address order over two
     * kilobytes, and read memory several times slower than in order on AMD Zen 4, for a little
     * speed in cache (bench/RESULTS.md, session 30). For the loops that only read (the finite
     * check, the sums of squares); loops that also write gained little from memory and lost more
     * in cache.
     */
    @SuppressWarnings("FieldMayBeFinal")
    static int uncountedOne = 1;

    /** Whether the lanes run here (see the class). */
    public static boolean available() {
        return AVAILABLE;
    }

    /** Elements per step of {@link #averageF32}: a multiple of it is done there, the rest is the caller's. */
    public static int width() {
        return AVAILABLE ? LaneKernels.LANES : 1;
    }

    /**
     * Elements {@code [from, from + steps * width())} of the fp32 average kernels: the float64 sum
     * of {@code in} in order, divided by {@code k} as they divide, rounded once to fp32, written into
     * every segment of {@code out} (which may be some of {@code in}). Segments are fp32 views from
     * element 0, at least that long; only if {@link #available()}. The 16-bit averages are
     * {@link #averageTwoBf16}, {@link #averageBf16} and {@link #averageF16}.
     */
    public static void averageF32(MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        LaneKernels.average(in, out, from, steps, k);
    }

    /**
     * For each piece {@code p}: elements {@code [from[p], to[p])} of the fp32 segments
     * {@code pieces[p]} (2 to 8 replicas, views from element 0) all set to their mean, with the
     * average kernels' bits: {@link #averageF32} for many short pieces in one call, whose loop over
     * them C2 compiles with the lanes' loops inside. Only if {@link #available()}.
     */
    public static void averageFp32Pieces(MemorySegment[][] pieces, long[] from, long[] to) {
        LaneKernels.fp32Pieces(pieces, from, to);
    }

    /**
     * The float64 sum of squares of fp32 elements {@code [from, to)}: {@code sumOfSquares}, in an
     * order of the lanes' own (not the kernels'), the same for the same range on every call, compiled
     * or not. Only if {@link #available()}.
     */
    public static double sumOfSquaresF32(MemorySegment x, long from, long to) {
        return LaneKernels.sumOfSquaresF32(x, from, to);
    }

    /** As {@link #sumOfSquaresF32} for bf16 elements: {@code sumOfSquaresBf16}. Only if {@link #available()}. */
    public static double sumOfSquaresBf16(MemorySegment x, long from, long to) {
        return LaneKernels.sumOfSquaresBf16(x, from, to);
    }

    /** As {@link #sumOfSquaresF32} for fp16 elements: {@code sumOfSquaresF16}. Only if {@link #available()}. */
    public static double sumOfSquaresF16(MemorySegment x, long from, long to) {
        return LaneKernels.sumOfSquaresF16(x, from, to);
    }

    /**
     * {@code sumOfSquaresPartials} (fp32) for slots {@code [from, from + steps * 2 * width())} of
     * {@code slots}, each of which has {@code count} elements {@code p, p + slots, ...} in {@code x}:
     * element {@code j} into running sum {@code j mod 8} while whole groups of eight remain, the
     * rest into sum 0, the eight added pairwise, into {@code partials} (fp64, slot order). Below
     * 32 elements ({@code -Dgradsync.partials.tallRows}) a step of slots keeps its sums in
     * registers over all its rows; from there on the slots go one running sum at a time. Only if
     * {@link #available()}. Returns the steps done, the first ones: the last step's vectors may
     * reach past the array's end in its last row (see {@link #stepsWithin}), and that step is then
     * the caller's.
     */
    public static long squaresPartialsF32(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        if (count >= TALL) {
            long done = stepsWithin(x, 4, 3 * width(), slots, from, steps, count);
            PartialsPerSum.squaresF32(x, slots, from, done, count, partials);
            return done;
        }
        PartialsPerStep.squaresPartialsF32(x, slots, from, steps, count, partials);
        return steps;
    }

    /**
     * As {@link #squaresPartialsF32} for bf16 elements, also steps of {@code 2 * width()} slots;
     * where the rows crowd a cache set ({@link #crowded}) and the segments are native memory, two
     * steps at a time read each row's whole vector once. Only if {@link #available()}.
     */
    public static long squaresPartialsBf16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        long done = stepsWithin(x, 2, 4 * width(), slots, from, steps, count);
        if (count >= TALL) {
            PartialsPerSum.squaresBf16(x, slots, from, done, count, partials);
        } else if (crowded(slots, count, 2) && LaneKernels.allNative(x, partials)) {
            PartialsWholeRows.squaresBf16(x, slots, from, done / 2, count, partials);
            PartialsPerStep.squaresPartialsBf16(x, slots, from + done / 2 * 4 * width(), done % 2, count, partials);
        } else {
            PartialsPerStep.squaresPartialsBf16(x, slots, from, done, count, partials);
        }
        return done;
    }

    /**
     * As {@link #squaresPartialsBf16} for fp16 elements; slots read together with an infinity or
     * NaN are set to {@code slot.applyAsDouble(p)} one by one (the kernel's own sum). Only if
     * {@link #available()}.
     */
    public static long squaresPartialsF16(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials,
            LongToDoubleFunction slot) {
        long done = stepsWithin(x, 2, 4 * width(), slots, from, steps, count);
        if (count >= TALL) {
            PartialsPerSum.squaresF16(x, slots, from, done, count, partials, slot);
        } else if (crowded(slots, count, 2) && LaneKernels.allNative(x, partials)) {
            PartialsWholeRows.squaresF16(x, slots, from, done / 2, count, partials, slot);
            PartialsPerStep.squaresPartialsF16(x, slots, from + done / 2 * 4 * width(), done % 2, count, partials, slot);
        } else {
            PartialsPerStep.squaresPartialsF16(x, slots, from, done, count, partials, slot);
        }
        return done;
    }

    /**
     * Whether a partials step's {@code count} rows, {@code slots} elements of {@code bytes} apart,
     * put more than 8 pieces into one set of a first-level data cache of 64-byte lines and 4 KiB
     * ways (x86's, 8 ways or more): a stride of a multiple of 4 KiB, the usual power-of-two slots,
     * sends every row to one set. Where they do, a line read by one step is gone when the next
     * step reads its other half.
     */
    static boolean crowded(long slots, int count, int bytes) {
        long stride = slots * bytes % 4096;
        long sets = stride == 0 ? 1 : Math.min(64, 4096 / (1L << Math.min(12, Long.numberOfTrailingZeros(stride))));
        return count > 8 * sets;
    }

    /**
     * How many of {@code steps} partials steps of {@code 2 * width()} slots from slot {@code from}
     * read only within {@code x}, where a step reads {@code reach} elements of {@code bytes} from
     * the start of its piece of each row (a lower half's vector reaches a piece past it): only the
     * last row's can pass the end.
     */
    private static long stepsWithin(MemorySegment x, int bytes, int reach, long slots, long from, long steps, int count) {
        if (count == 0) {
            return steps; // nothing is read
        }
        long step = 2L * width();
        long lastStart = Math.floorDiv(x.byteSize() - (long) reach * bytes, bytes) - (count - 1) * slots; // the last slot a step may start at
        return lastStart < from ? 0 : Math.min(steps, (lastStart - from) / step + 1);
    }

    /**
     * {@code sumPartials} for slots {@code [from, from + steps * width())} of {@code slots}, each of
     * which has {@code count} fp64 elements {@code p, p + slots, ...} in {@code x}: added in that
     * order from 0.0, into {@code partials}. Only if {@link #available()}.
     */
    public static void sumsPartialsF64(MemorySegment x, long slots, long from, long steps, int count, MemorySegment partials) {
        PartialsPerStep.sumsPartialsF64(x, slots, from, steps, count, partials);
    }

    /**
     * Whether any of 32-bit words {@code [from, to)} of {@code x}, masked by {@code magnitude} and
     * added to {@code carry}, has a bit of {@code signs} set: the finite checks' test, where an
     * element's magnitude at or above its infinity's carries into its top bit (a word holds one
     * float or two 16-bit elements). Only if {@link #available()}.
     */
    public static boolean anyCarries(MemorySegment x, long from, long to, int magnitude, int carry, int signs) {
        return LaneWords.anyCarries(x, from, to, magnitude, carry, signs);
    }

    /** {@code acc[i] = bf16(acc[i] + x[i])}: {@code sumIntoBf16}. Only if {@link #available()}. */
    public static void sumIntoBf16(MemorySegment acc, MemorySegment x, int n) {
        LaneWords.sumInto(acc, x, n);
    }

    /** {@code x[i] *= s} in fp32: {@code scale}. Only if {@link #available()}. */
    public static void scaleF32(MemorySegment x, float s, int n) {
        LaneWords.scaleF32(x, s, n);
    }

    /** {@code x[i] = bf16(x[i] * s)}: {@code scaleBf16}. Only if {@link #available()}. */
    public static void scaleBf16(MemorySegment x, float s, int n) {
        LaneWords.scale(x, s, n);
    }

    /** {@code average2Bf16} with {@code k = 2}. Only if {@link #available()}. */
    public static void averageTwoBf16(MemorySegment out, MemorySegment a, MemorySegment b, int n) {
        LaneWords.averageTwo(out, a, b, n);
    }

    /**
     * {@code average3Bf16} .. {@code average8Bf16} with {@code k} = the count of {@code in} (3 to 8),
     * into {@code out}, {@code n} elements. Only if {@link #available()}.
     */
    public static void averageBf16(MemorySegment out, MemorySegment[] in, int n) {
        LaneWords.average(out, in, n, true);
    }

    /** As {@link #averageBf16} for fp16: {@code average3F16} .. {@code average8F16}. Only if {@link #available()}. */
    public static void averageF16(MemorySegment out, MemorySegment[] in, int n) {
        LaneWords.average(out, in, n, false);
    }

    /** Floats {@code [0, count)} of {@code from} into {@code dst} from byte {@code offset}. Only if {@link #available()}. */
    public static void storeFloats(float[] from, int count, MemorySegment dst, long offset) {
        LaneWords.storeFloats(from, count, dst, offset);
    }

    /** {@code f32ToBf16}. Only if {@link #available()}. */
    public static void f32ToBf16(MemorySegment in, MemorySegment out, int n) {
        LaneWords.toBf16(in, out, n);
    }

    /** {@code bf16ToF32}. Only if {@link #available()}. */
    public static void bf16ToF32(MemorySegment in, MemorySegment out, int n) {
        LaneWords.fromBf16(in, out, n);
    }

    private static boolean availableHere() {
        if (!Boolean.parseBoolean(System.getProperty("gradsync.lanes", "true"))
                || ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return false;
        }
        try {
            return LaneKernels.suits() && LaneWords.suits();
        } catch (LinkageError e) { // the module is there but this module does not read it
            return false;
        }
    }
}
