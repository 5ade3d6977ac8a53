package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.HalfArray;

import io.gradsync.tasks.kernels.internal.CoreSpread;
import io.gradsync.tasks.kernels.internal.Lanes;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import java.util.function.IntToDoubleFunction;

import static io.gradsync.tasks.kernels.JvmFastForms.CHUNK;

/**
 * The JVM fast forms of the built-in reductions ({@link ReductionKernels}): a GPU kernel's thread per element waiting at barriers
 * is the slowest way to run on a CPU, so these take chunks of {@link JvmFastForms#CHUNK}
 * elements on every core, widened into heap arrays in loops C2 vectorizes. Their results are the kernels': the
 * same finite flag; the same partials bit for bit (the same elements into the same eight running
 * sums in the same order, slot by slot, only visited row by row); and the sum of squares in fp64,
 * added to {@code result[0]} once as a float where the kernels add one float per group in no
 * fixed order.
 */
final class ReductionJvmForm {
    private ReductionJvmForm() {
    }

    /** The form of reduction {@code name}, or null if it is not one. */
    static JvmFastForm of(String name) {
        return switch (name) {
            case "sumOfSquares", "sumOfSquaresBf16", "sumOfSquaresF16" -> ReductionJvmForm::sumOfSquares;
            case "checkFinite", "checkFiniteBf16", "checkFiniteF16" -> ReductionJvmForm::checkFinite;
            case "sumOfSquaresPartials", "sumOfSquaresPartialsBf16", "sumOfSquaresPartialsF16" -> ReductionJvmForm::partials;
            case "sumPartials" -> ReductionJvmForm::sumPartials;
            default -> null;
        };
    }

    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    /** Chunks of {@link JvmFastForms#CHUNK} elements spread over the cores, a task per run of them. */
    private static int tasks(int chunks) {
        return Math.max(1, Math.min(chunks, Runtime.getRuntime().availableProcessors() * 4));
    }

    /**
     * Runs {@code task} for each of {@code 0 .. tasks - 1}: on every core where the launch may share
     * them and any thread may touch {@code args}' arrays (every core woken at once where each task
     * reads enough of the input, {@code args[0]}: {@link CoreSpread#each(int, long, IntConsumer)}),
     * else here in turn. Not a parallel stream: C2 compiled a reduction's loop into the stream's
     * own code, where it ran several times slower for the rest of the run.
     */
    private static void eachTask(int tasks, Object[] args, IntConsumer task) {
        if (CoreSpread.mayShare() && CoreSpread.shareable(args)) {
            CoreSpread.each(tasks, ((KernelArray) args[0]).segment().byteSize() / tasks, task);
        } else {
            for (int t = 0; t < tasks; t++) {
                task.accept(t);
            }
        }
    }

    private static boolean sumOfSquares(Object[] args) {
        KernelArray x = (KernelArray) args[0];
        FloatArray result = (FloatArray) args[1];
        if (result.getSize() < 1) {
            return false;
        }
        // a method per element type: shared by the types, its loop's profile would hold all three loads
        Squares squares = switch (JvmFastForms.Type.of(x)) {
            case F32 -> ReductionJvmForm::squaresF32;
            case F16 -> ReductionJvmForm::squaresF16;
            case BF16 -> ReductionJvmForm::squaresBf16;
        };
        int n = x.getSize();
        int chunks = (n + CHUNK - 1) / CHUNK;
        int tasks = tasks(chunks);
        double[] parts = new double[tasks];
        MemorySegment seg = x.segment();
        JvmFastForms.Type type = JvmFastForms.Type.of(x);
        boolean inLanes = Lanes.available();
        // a method per type here too, called through an interface (not inlined into this shared loop)
        SquaresInLanes inLanesOfType = switch (type) {
            case F32 -> Lanes::sumOfSquaresF32;
            case F16 -> Lanes::sumOfSquaresF16;
            case BF16 -> Lanes::sumOfSquaresBf16;
        };
        eachTask(tasks, args, task -> {
            if (inLanes) {
                long from = (long) chunks * task / tasks * CHUNK;
                long to = Math.min(n, (long) chunks * (task + 1) / tasks * CHUNK);
                parts[task] = inLanesOfType.sum(seg, from, to);
                return;
            }
            JvmFastForms.Chunk c = new JvmFastForms.Chunk();
            double[] lanes = c.acc; // lane i sums the squares of every chunk's place i
            java.util.Arrays.fill(lanes, 0.0);
            int from = (int) ((long) chunks * task / tasks) * CHUNK;
            int to = (int) Math.min(n, (long) chunks * (task + 1) / tasks * CHUNK);
            squares.add(seg, from, to, c);
            for (int width = CHUNK / 2; width > 0; width >>= 1) { // then the lanes by a tree of halves
                for (int i = 0; i < width; i++) {
                    lanes[i] += lanes[i + width];
                }
            }
            parts[task] = lanes[0];
        });
        double total = 0;
        for (double p : parts) {
            total += p;
        }
        result.set(0, result.get(0) + (float) total);
        return true;
    }

    /** The float64 sum of the squares of elements {@code [from, to)} in SIMD lanes. */
    private interface SquaresInLanes {
        double sum(MemorySegment x, long from, long to);
    }

    /** Adds the squares of elements {@code from .. to - 1} ({@code from} a chunk's first) into {@code c.acc}, as fp64 (exact for a float's square). */
    private interface Squares {
        void add(MemorySegment x, int from, int to, JvmFastForms.Chunk c);
    }

    /** By bulk copies: a loop reading floats from the segment runs at half their speed. */
    private static void squaresF32(MemorySegment x, int from, int to, JvmFastForms.Chunk c) {
        double[] lanes = c.acc;
        float[] f = c.f;
        for (int at = from; at < to; at += CHUNK) {
            int count = Math.min(CHUNK, to - at);
            MemorySegment.copy(x, 4L * at, c.fView, 0, 4L * count);
            for (int i = 0; i < count; i++) {
                lanes[i] += (double) f[i] * f[i];
            }
        }
    }

    private static void squaresF16(MemorySegment x, int from, int to, JvmFastForms.Chunk c) {
        double[] lanes = c.acc;
        for (int at = from; at < to; at += CHUNK) {
            int count = Math.min(CHUNK, to - at);
            long base = 2L * at;
            for (int i = 0; i < count; i++) { // one segment and one array: a vector loop
                float v = Float.float16ToFloat(x.get(SHORT, base + 2L * i));
                lanes[i] += (double) v * v;
            }
        }
    }

    /** Through the chunk's floats: reinterpreting bits in a loop would keep C2 from vectorizing it. */
    private static void squaresBf16(MemorySegment x, int from, int to, JvmFastForms.Chunk c) {
        double[] lanes = c.acc;
        float[] f = c.f;
        for (int at = from; at < to; at += CHUNK) {
            int count = Math.min(CHUNK, to - at);
            loadBf16(x, at, count, c.fView);
            if (count < CHUNK) {
                zeroPast(JvmFastForms.Type.BF16, f, count);
            }
            for (int i = 0; i < CHUNK; i++) {
                lanes[i] += (double) f[i] * f[i];
            }
        }
    }

    /**
     * As {@code Type.BF16.load}, the bits written straight into the floats' memory through their
     * segment, with no bulk copy: the reductions then read those floats in their next loop. (The
     * averages' loads keep the copy: there this measured slower.)
     */
    private static void loadBf16(MemorySegment src, int at, int count, MemorySegment floats) {
        long base = 2L * at;
        for (int p = 0; p < count / 2; p++) {
            int w = src.get(INT, base + 4L * p);
            floats.setAtIndex(ValueLayout.JAVA_INT, p, w << 16);
            floats.setAtIndex(ValueLayout.JAVA_INT, JvmFastForms.HALF + p, w & 0xFFFF_0000);
        }
        if (count % 2 != 0) {
            floats.setAtIndex(ValueLayout.JAVA_INT, count / 2, src.get(SHORT, base + 2L * (count - 1)) << 16);
        }
    }

    /** Where element {@code i} of a chunk sits after {@code t.load}: bf16 chunks hold even elements, then odd ones. */
    private static int slot(JvmFastForms.Type t, int i) {
        return t == JvmFastForms.Type.BF16 ? ((i & 1) == 0 ? i >> 1 : JvmFastForms.HALF + (i >> 1)) : i;
    }

    /** Zeroes the places of elements {@code count ..} of a chunk loaded with fewer than a chunk's elements. */
    private static void zeroPast(JvmFastForms.Type t, float[] f, int count) {
        for (int i = count; i < CHUNK; i++) {
            f[slot(t, i)] = 0f;
        }
    }

    /**
     * Sets {@code flag[0] = 1} if any element's magnitude bits are those of an infinity or NaN:
     * adding the distance from the infinity's magnitude to the top bit carries into it exactly
     * then, so an OR over the elements says it. The 16-bit elements are taken two to a 32-bit word,
     * both halves at once (neither carry reaches the other half); an odd last one alone.
     */
    private static boolean checkFinite(Object[] args) {
        KernelArray x = (KernelArray) args[0];
        IntArray flag = (IntArray) args[1];
        if (flag.getSize() < 1) {
            return false;
        }
        boolean wide = x instanceof FloatArray;
        int carry16 = x instanceof Bfloat16Array ? 0x8000 - 0x7f80 : 0x8000 - 0x7c00;
        int magnitude = wide ? 0x7fff_ffff : 0x7fff_7fff;
        int carry = wide ? 0x8000_0000 - 0x7f80_0000 : carry16 * 0x1_0001;
        int signs = wide ? 0x8000_0000 : 0x8000_8000;
        int n = x.getSize();
        long words = wide ? n : n / 2;
        int chunks = (int) ((words + CHUNK - 1) / CHUNK);
        int tasks = tasks(chunks);
        MemorySegment seg = x.segment();
        boolean inLanes = Lanes.available();
        boolean oddLastBad = !wide && n % 2 != 0 && ((seg.get(SHORT, 2L * (n - 1)) & 0x7fff) + carry16 & 0x8000) != 0;
        AtomicBoolean bad = new AtomicBoolean(oddLastBad);
        eachTask(tasks, args, task -> {
            long from = (long) chunks * task / tasks * CHUNK;
            long to = Math.min(words, (long) chunks * (task + 1) / tasks * CHUNK);
            if (!bad.get() && (inLanes ? Lanes.anyCarries(seg, from, to, magnitude, carry, signs) : anyCarries(seg, from, to, magnitude, carry, signs))) {
                bad.set(true);
            }
        });
        if (bad.get()) {
            flag.set(0, 1);
        }
        return true;
    }

    /** {@link Lanes#anyCarries} without the lanes. */
    private static boolean anyCarries(MemorySegment seg, long from, long to, int magnitude, int carry, int signs) {
        int any = 0;
        for (long w = from; w < to; w++) {
            any |= (seg.get(INT, 4 * w) & magnitude) + carry;
        }
        return (any & signs) != 0;
    }

    /**
     * The partial sums of squares: slot {@code p} of {@code P} gets elements {@code p + jP}, element
     * {@code j} into running sum {@code j mod 8} below the last whole group of eight and into sum
     * 0 after it, added {@code ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))} (the kernels'
     * {@code squares} and {@code squares16}). In SIMD lanes ({@link #partialsInLanes}) where the
     * vector module is there; otherwise slots are taken {@link JvmFastForms#CHUNK} at a time and their elements row by row,
     * {@code x[jP + p0 .. jP + p1)}, which reads memory in order.
     */
    private static boolean partials(Object[] args) {
        KernelArray x = (KernelArray) args[0];
        DoubleArray partials = (DoubleArray) args[1];
        if (partials.segment().isReadOnly()) {
            return false;
        }
        JvmFastForms.Type t = JvmFastForms.Type.of(x);
        int slots = partials.getSize();
        if (Lanes.available() && t == JvmFastForms.Type.F32) {
            FloatArray f = (FloatArray) x;
            partialsInLanes(args, f.getSize(), slots, partials.segment(), 2 * Lanes.width(),
                    (from, steps, count) -> Lanes.squaresPartialsF32(f.segment(), slots, from, steps, count, partials.segment()),
                    p -> ReductionKernels.squares(f, p, slots));
            return true;
        }
        if (Lanes.available() && t == JvmFastForms.Type.BF16) {
            Bfloat16Array h = (Bfloat16Array) x;
            partialsInLanes(args, h.getSize(), slots, partials.segment(), 2 * Lanes.width(),
                    (from, steps, count) -> Lanes.squaresPartialsBf16(h.segment(), slots, from, steps, count, partials.segment()),
                    p -> ReductionKernels.squares16(h, p, slots, true));
            return true;
        }
        int n = x.getSize();
        if (Lanes.available() && t == JvmFastForms.Type.F16) {
            HalfArray h = (HalfArray) x;
            partialsInLanes(args, n, slots, partials.segment(), 2 * Lanes.width(),
                    (from, steps, count) -> Lanes.squaresPartialsF16(h.segment(), slots, from, steps, count, partials.segment(),
                            p -> ReductionKernels.squares16(h, (int) p, slots, false)),
                    p -> ReductionKernels.squares16(h, p, slots, false));
            return true;
        }
        // without the vector module: slots a chunk at a time, their rows in order
        int blocks = (slots + CHUNK - 1) / CHUNK;
        int tasks = tasks(blocks);
        eachTask(tasks, args, task -> {
            JvmFastForms.Chunk c = new JvmFastForms.Chunk();
            float[] f = c.f;
            // the running sums of slot p0 + i sit where a chunk load puts element i
            double[][] s = new double[8][CHUNK];
            double[] sums = new double[CHUNK];
            double[] ordered = new double[CHUNK];
            MemorySegment sumsView = MemorySegment.ofArray(sums);
            MemorySegment orderedView = MemorySegment.ofArray(ordered);
            MemorySegment s0View = MemorySegment.ofArray(s[0]);
            for (int block = (int) ((long) blocks * task / tasks); block < (long) blocks * (task + 1) / tasks; block++) {
                int p0 = block * CHUNK;
                int width = Math.min(CHUNK, slots - p0);
                int rows = p0 < n ? (int) (((long) n - p0 + slots - 1) / slots) : 0;
                // the block's first `full` slots sum `rows` elements, the others one fewer (a block spans fewer than `slots`)
                int full = (int) Math.max(0, Math.min(width, (long) n - (long) (rows - 1) * slots - p0));
                int fullCut = rows - rows % 8; // where a slot's last whole group of eight ends
                int sharedCut = full < width ? Math.max(0, (rows - 1) - (rows - 1) % 8) : fullCut;
                // the positions of the full slots' elements after a chunk load: [0, fullEnd) and [HALF, HALF + fullOddEnd) for bf16
                int fullEnd = t == JvmFastForms.Type.BF16 ? (full + 1) / 2 : full;
                int fullOddEnd = full / 2;
                // sums the rows below do not start; below eight elements a slot has only sum 0
                for (int r = Math.min(rows, sharedCut); r < (fullCut == 0 ? 1 : 8); r++) {
                    java.util.Arrays.fill(s[r], 0.0);
                }
                for (int j = 0; j < rows; j++) {
                    long start = (long) j * slots + p0;
                    int len = (int) Math.min(width, n - start);
                    if (t == JvmFastForms.Type.BF16) {
                        loadBf16(x.segment(), Math.toIntExact(start), len, c.fView);
                    } else {
                        t.load(c, x.segment(), Math.toIntExact(start), len, f, c.fView);
                    }
                    if (len < CHUNK) {
                        zeroPast(t, f, len); // adding +0.0 leaves a sum of squares as it is
                    }
                    if (j < 8 && j < sharedCut) { // a sum's first element: 0.0 + x is x for a square (never -0.0)
                        double[] a = s[j];
                        for (int i = 0; i < CHUNK; i++) {
                            a[i] = (double) f[i] * f[i];
                        }
                    } else if (j < sharedCut) {
                        addSquares(s[j & 7], f, 0, CHUNK);
                    } else if (j < fullCut) { // into sum j mod 8 for the full slots, sum 0 for the others
                        if (t == JvmFastForms.Type.BF16) {
                            addSquares(s[j & 7], f, 0, fullEnd);
                            addSquares(s[0], f, fullEnd, JvmFastForms.HALF);
                            addSquares(s[j & 7], f, JvmFastForms.HALF, JvmFastForms.HALF + fullOddEnd);
                            addSquares(s[0], f, JvmFastForms.HALF + fullOddEnd, CHUNK);
                        } else {
                            addSquares(s[j & 7], f, 0, fullEnd);
                            addSquares(s[0], f, fullEnd, CHUNK);
                        }
                    } else { // past every slot's last whole group
                        addSquares(s[0], f, 0, CHUNK);
                    }
                }
                double[] s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5], s6 = s[6], s7 = s[7];
                double[] total = s0; // the other seven zero: s0 + 0.0 is s0
                if (fullCut > 0) {
                    total = sums;
                    for (int k = 0; k < CHUNK; k++) { // the kernels' order of the eight sums, in a vector loop
                        sums[k] = ((s0[k] + s1[k]) + (s2[k] + s3[k])) + ((s4[k] + s5[k]) + (s6[k] + s7[k]));
                    }
                }
                if (t == JvmFastForms.Type.BF16) {
                    for (int q = 0; q < JvmFastForms.HALF; q++) { // back to slot order
                        ordered[2 * q] = total[q];
                        ordered[2 * q + 1] = total[JvmFastForms.HALF + q];
                    }
                    MemorySegment.copy(orderedView, 0, partials.segment(), 8L * p0, 8L * width);
                } else {
                    MemorySegment.copy(fullCut > 0 ? sumsView : s0View, 0, partials.segment(), 8L * p0, 8L * width);
                }
            }
        });
        return true;
    }

    /**
     * A partials kernel in SIMD lanes over {@code slots} slots of an array of {@code n} elements: a
     * step of {@code step} slots at a time ({@code lanes}), its running sums in registers over all its rows; the
     * slots before {@code split} have {@code rows} elements, the others one fewer; the few slots past
     * a range's last whole step one by one ({@code one}), as the kernel sums each.
     */
    private static void partialsInLanes(Object[] args, int n, int slots, MemorySegment out, int step, SlotSteps lanes, IntToDoubleFunction one) {
        int rows = (int) (((long) n + slots - 1) / slots);
        long split = n - (long) (rows - 1) * slots;
        int blocks = (slots + CHUNK - 1) / CHUNK;
        int tasks = tasks(blocks);
        eachTask(tasks, args, task -> {
            long from = (long) blocks * task / tasks * CHUNK;
            long to = Math.min(slots, (long) blocks * (task + 1) / tasks * CHUNK);
            slotsInLanes(out, step, lanes, one, from, Math.min(to, split), rows);
            slotsInLanes(out, step, lanes, one, Math.max(from, split), to, rows - 1);
        });
    }

    /** Slots {@code [from, from + steps * step)}, each of {@code count} elements, in lanes. */
    private interface SlotSteps {
        /** Returns the steps done, the first ones of {@code steps}. */
        long run(long from, long steps, int count);
    }

    /** Slots {@code [from, to)}, each of {@code count} elements, in lanes and the rest one by one. */
    private static void slotsInLanes(MemorySegment out, int step, SlotSteps lanes, IntToDoubleFunction one, long from, long to, int count) {
        if (from >= to) {
            return;
        }
        long done = lanes.run(from, (to - from) / step, count);
        for (long p = from + done * step; p < to; p++) {
            out.setAtIndex(ValueLayout.JAVA_DOUBLE, p, one.applyAsDouble((int) p));
        }
    }

    /** {@code a[i] += f[i] * f[i]} in fp64 for {@code i} in {@code [from, to)}. */
    private static void addSquares(double[] a, float[] f, int from, int to) {
        for (int i = from; i < to; i++) {
            a[i] += (double) f[i] * f[i];
        }
    }

    /** Slot {@code p} of {@code P} gets {@code x[p] + x[p + P] + ...} in that order, as the kernel adds them. */
    private static boolean sumPartials(Object[] args) {
        DoubleArray x = (DoubleArray) args[0];
        DoubleArray partials = (DoubleArray) args[1];
        if (partials.segment().isReadOnly()) {
            return false;
        }
        int n = x.getSize();
        int slots = partials.getSize();
        if (Lanes.available()) {
            partialsInLanes(args, n, slots, partials.segment(), Lanes.width(),
                    (from, steps, count) -> {
                        Lanes.sumsPartialsF64(x.segment(), slots, from, steps, count, partials.segment());
                        return steps;
                    },
                    p -> sumOfSlot(x, p, slots));
            return true;
        }
        int blocks = (slots + CHUNK - 1) / CHUNK;
        eachTask(blocks, args, block -> {
            int p0 = block * CHUNK;
            int width = Math.min(CHUNK, slots - p0);
            double[] acc = new double[width];
            double[] row = new double[width];
            MemorySegment rowView = MemorySegment.ofArray(row);
            int rows = p0 < n ? (int) (((long) n - p0 + slots - 1) / slots) : 0;
            for (int j = 0; j < rows; j++) {
                long start = (long) j * slots + p0;
                int len = (int) Math.min(width, n - start);
                MemorySegment.copy(x.segment(), 8L * start, rowView, 0, 8L * len);
                for (int i = 0; i < len; i++) {
                    acc[i] += row[i];
                }
            }
            MemorySegment.copy(MemorySegment.ofArray(acc), 0, partials.segment(), 8L * p0, 8L * width);
        });
        return true;
    }

    /** {@code x[p] + x[p + slots] + ...} from 0.0, in that order: one slot of {@code sumPartials}. */
    private static double sumOfSlot(DoubleArray x, int p, int slots) {
        double acc = 0.0;
        for (long i = p; i < x.getSize(); i += slots) {
            acc += x.get((int) i);
        }
        return acc;
    }
}
