package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.kernels.JvmFastForms.Chunk;
import io.gradsync.tasks.kernels.JvmFastForms.Type;
import io.gradsync.tasks.kernels.internal.Lanes;
import io.gradsync.tasks.kernels.internal.Quotients;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.gradsync.tasks.kernels.JvmFastForms.CHUNK;
import static io.gradsync.tasks.kernels.JvmFastForms.fits;

/**
 * The JVM fast form of the fused averages ({@link AverageKernels}): the float64 sum of the replicas
 * in replica order, divided by {@code k} and rounded once, as the kernels do, a chunk at a time
 * ({@link JvmFastForms}), the replicas loaded two at a time and added in passes C2 vectorizes;
 * in SIMD lanes ({@link Lanes}) for fp32, and for 16-bit replicas divided by their count. The
 * in-place averages are the same form into the first input, copied into the others a block at a time.
 */
final class AverageJvmForm {
    private AverageJvmForm() {
    }

    /** The form of average {@code name}, or null if it has none. */
    static JvmFastForm of(String name) {
        if (name.matches("averageInPlace[2-8](Bf16|F16)?")) {
            return AverageJvmForm::averageInPlace;
        }
        return name.matches("average[2-8]|average[2-8](Bf16|F16)") ? AverageJvmForm::average : null;
    }

    /** Elements per block of an in-place average: the first input's block is still in L1 when it is copied. */
    private static final int IN_PLACE_BLOCK = 4096;

    /**
     * {@code averageInPlace<k>}: a block at a time, the average written into {@code a0} (as
     * {@code average<k>} with {@code out = a0}, which reads each element before it writes it), then
     * copied from there into the other inputs.
     */
    private static boolean averageInPlace(Object[] args) {
        KernelArray[] in = new KernelArray[args.length - 1];
        for (int j = 0; j < in.length; j++) {
            in[j] = (KernelArray) args[j];
        }
        KernelArray first = in[0];
        if (!fits(first, in) || !apart(in)) {
            return false;
        }
        int n = first.getSize();
        for (int at = 0; at < n; ) {
            int to = n - at < 2 * IN_PLACE_BLOCK ? n : at + IN_PLACE_BLOCK; // the last block takes the rest
            Object[] block = JvmFastForms.slice(args, at, to);
            Object[] intoFirst = new Object[block.length + 1];
            intoFirst[0] = block[0];
            System.arraycopy(block, 0, intoFirst, 1, block.length);
            if (!average(intoFirst)) {
                throw new IllegalStateException("a block of arrays the form takes whole was refused"); // fits() says otherwise
            }
            MemorySegment mean = ((KernelArray) block[0]).segment();
            for (int j = 1; j < in.length; j++) {
                MemorySegment.copy(mean, 0, ((KernelArray) block[j]).segment(), 0, mean.byteSize());
            }
            at = to;
        }
        return true;
    }

    /** True if no two of {@code arrays} share memory: each gets its own copy of the average. */
    private static boolean apart(KernelArray[] arrays) {
        for (int i = 0; i < arrays.length; i++) {
            for (int j = i + 1; j < arrays.length; j++) {
                if (arrays[i].segment().asOverlappingSlice(arrays[j].segment()).isPresent()) {
                    return false;
                }
            }
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
        if (t == Type.F32 && Lanes.available()) {
            inLanes(out, in, (float) k);
            return true;
        }
        if (t == Type.BF16 && in.length == 2 && k == 2 && Lanes.available()) {
            Lanes.averageTwoBf16(out.segment(), in[0].segment(), in[1].segment(), out.getSize());
            return true;
        }
        if (t != Type.F32 && in.length >= 3 && k == in.length && Lanes.available()) {
            MemorySegment[] from = new MemorySegment[in.length];
            for (int j = 0; j < in.length; j++) {
                from[j] = in[j].segment();
            }
            if (t == Type.BF16) {
                Lanes.averageBf16(out.segment(), from, out.getSize());
            } else {
                Lanes.averageF16(out.segment(), from, out.getSize());
            }
            return true;
        }
        Sum sum = in.length == 2 ? Sum.TWO : in.length == 3 ? Sum.THREE : in.length % 2 == 0 ? Sum.ACC_TWO : Sum.ACC;
        boolean halves = t != JvmFastForms.Type.F32 && sum == Sum.TWO && k == 2;
        Chunk c = Chunk.ofThisThread();
        for (int at = 0; at < out.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, out.getSize() - at);
            if (halves) {
                t.loadHalfSum(c, in[0].segment(), in[1].segment(), at, count);
                t.store(c, out.segment(), at, count);
                continue;
            }
            t.loadTwo(c, in[0].segment(), in[1].segment(), at, count);
            if (sum == Sum.THREE) {
                t.load(c, in[2].segment(), at, count, c.f3, c.f3View);
            } else if (sum != Sum.TWO) {
                sumFirstTwo(c);
                int rest = sum == Sum.ACC_TWO ? in.length - 2 : in.length - 1; // the replicas the division's pass adds
                for (int j = 2; j < rest; j += 2) { // those between, two at a time (an even count)
                    t.loadTwo(c, in[j].segment(), in[j + 1].segment(), at, count);
                    addTwo(c);
                }
                if (sum == Sum.ACC_TWO) {
                    t.loadTwo(c, in[rest].segment(), in[rest + 1].segment(), at, count);
                } else {
                    t.load(c, in[rest].segment(), at, count, c.f, c.fView);
                }
            }
            if (t == JvmFastForms.Type.F32) {
                divide(c, k, sum);
                t.store(c, out.segment(), at, count);
            } else {
                divideToNearest(c, k, sum);
                t.storeRoundedToOdd(c, out.segment(), at, count);
            }
        }
        return true;
    }

    /**
     * The fp32 average in SIMD lanes ({@link Lanes}), reading every input straight from its memory,
     * and the few elements past the last whole step as the kernel does each.
     */
    private static void inLanes(KernelArray out, KernelArray[] in, float k) {
        MemorySegment[] from = new MemorySegment[in.length];
        for (int j = 0; j < in.length; j++) {
            from[j] = in[j].segment();
        }
        MemorySegment to = out.segment();
        int n = out.getSize();
        long steps = n / Lanes.width();
        Lanes.averageF32(from, new MemorySegment[] {to}, 0, steps, k);
        double r = 1.0 / k;
        for (long i = steps * Lanes.width(); i < n; i++) {
            double sum = from[0].getAtIndex(ValueLayout.JAVA_FLOAT, i); // not 0 + ...: a sum of -0 stays -0
            for (int j = 1; j < from.length; j++) {
                sum += from[j].getAtIndex(ValueLayout.JAVA_FLOAT, i);
            }
            to.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) Quotients.divide(sum, k, r));
        }
    }

    /** {@code 1 / k} where multiplying by it rounds as dividing by {@code k} does (a power of two), else 0. */
    static double exactReciprocal(double k) {
        return Double.isFinite(k) && Math.abs(k) == Math.scalb(1.0, Math.getExponent(k)) ? 1 / k : 0;
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

    /** {@code acc[i] = (double) f[i] + f2[i]}: the first two replicas. */
    static void sumFirstTwo(Chunk c) {
        double[] a = c.acc;
        float[] x = c.f;
        float[] y = c.f2;
        for (int i = 0; i < CHUNK; i++) {
            a[i] = (double) x[i] + y[i];
        }
    }

    /** {@code acc[i] = acc[i] + f[i] + f2[i]}: the next two replicas, in order. */
    static void addTwo(Chunk c) {
        double[] a = c.acc;
        float[] x = c.f;
        float[] y = c.f2;
        for (int i = 0; i < CHUNK; i++) {
            a[i] = a[i] + x[i] + y[i];
        }
    }

    /** {@code acc[i]} = the whole sum of the replicas (see {@link Sum}). */
    static void sumIntoAcc(Chunk c, Sum sum) {
        double[] a = c.acc;
        float[] x = c.f;
        float[] y = c.f2;
        float[] z = c.f3;
        switch (sum) {
            case TWO -> sumFirstTwo(c);
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
            case ACC_TWO -> addTwo(c);
        }
    }

    /** {@code f[i] = (float) (sum / k)}, the sum of the replicas (see {@link Sum}). */
    static void divide(Chunk c, double k, Sum sum) {
        double[] a = c.acc;
        float[] x = c.f;
        double r = exactReciprocal(k);
        if (r == 0 && Quotients.isWholeCount(k)) {
            divideByCount(c, k, sum);
            return;
        }
        if (r != 0 && sum == Sum.TWO) { // two replicas and a power of two: one pass
            scaledSumOfTwo(x, c.f2, r);
            return;
        }
        if (sum == Sum.ACC) {
            for (int i = 0; i < CHUNK; i++) {
                x[i] = (float) quotient(a[i] + x[i], k, r);
            }
        } else if (sum == Sum.ACC_TWO) {
            float[] y = c.f2;
            for (int i = 0; i < CHUNK; i++) {
                x[i] = (float) quotient(a[i] + x[i] + y[i], k, r);
            }
        } else {
            sumIntoAcc(c, sum);
            for (int i = 0; i < CHUNK; i++) {
                x[i] = (float) quotient(a[i], k, r);
            }
        }
    }

    /**
     * {@link #divide} for a whole {@code k} that is not a power of two, with no division
     * ({@link Quotients#byCount}): the quotients into {@code err}, then into {@code f}. Where the sum
     * is infinite (an input was) that gives NaN: those few are divided again.
     */
    private static void divideByCount(Chunk c, double k, Sum sum) {
        double r = 1 / k;
        switch (sum) { // a method per loop: C2 vectorizes each so, where one method of four loops ran slow
            case TWO -> byCountTwo(c.err, c.f, c.f2, k, r);
            case THREE -> byCountThree(c.err, c.f, c.f2, c.f3, k, r);
            case ACC -> byCountAcc(c.err, c.acc, c.f, k, r);
            case ACC_TWO -> byCountAccTwo(c.err, c.acc, c.f, c.f2, k, r);
        }
        MemorySegment.copy(c.errView, 0, c.errBitsView, 0, 4L * CHUNK);
        if (anyNaN(c.errBits)) {
            sumIntoAcc(c, sum);
            for (int i = 0; i < CHUNK; i++) {
                if (Float.isNaN(c.err[i])) {
                    c.err[i] = (float) (c.acc[i] / k);
                }
            }
        }
        MemorySegment.copy(c.errView, 0, c.fView, 0, 4L * CHUNK);
    }

    private static void byCountTwo(float[] q, float[] x, float[] y, double k, double r) {
        for (int i = 0; i < CHUNK; i++) {
            q[i] = (float) Quotients.byCount((double) x[i] + y[i], k, r);
        }
    }

    private static void byCountThree(float[] q, float[] x, float[] y, float[] z, double k, double r) {
        for (int i = 0; i < CHUNK; i++) {
            q[i] = (float) Quotients.byCount((double) x[i] + y[i] + z[i], k, r);
        }
    }

    private static void byCountAcc(float[] q, double[] a, float[] x, double k, double r) {
        for (int i = 0; i < CHUNK; i++) {
            q[i] = (float) Quotients.byCount(a[i] + x[i], k, r);
        }
    }

    private static void byCountAccTwo(float[] q, double[] a, float[] x, float[] y, double k, double r) {
        for (int i = 0; i < CHUNK; i++) {
            q[i] = (float) Quotients.byCount(a[i] + x[i] + y[i], k, r);
        }
    }

    /** {@code x[i] = (float) ((x[i] + y[i]) * r)} in float64, {@code r} an exact reciprocal. */
    private static void scaledSumOfTwo(float[] x, float[] y, double r) {
        for (int i = 0; i < CHUNK; i++) {
            x[i] = (float) (((double) x[i] + y[i]) * r);
        }
    }

    /** Whether any of the float bits {@code b} is a NaN's: integer operations only, for C2's vector loops. */
    static boolean anyNaN(int[] b) {
        int any = 0;
        for (int i = 0; i < CHUNK; i++) {
            any |= (b[i] & 0x7fff_ffff) + 0x007f_ffff; // past 0x7f800000, the infinities' bits, into the sign
        }
        return any < 0;
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
    static void divideToNearest(Chunk c, double k, Sum sum) {
        double[] a = c.acc;
        float[] x = c.f;
        float[] y = c.f2;
        float[] z = c.f3;
        float[] e = c.err;
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
            sumIntoAcc(c, sum);
            double r = exactReciprocal(k);
            for (int i = 0; i < CHUNK; i++) {
                nearest(c, i, quotient(a[i], k, r));
            }
        }
        MemorySegment.copy(c.fView, 0, c.bitsView, 0, 4L * CHUNK);
        MemorySegment.copy(c.errView, 0, c.errBitsView, 0, 4L * CHUNK);
    }

    /** {@code bits[i] = toOdd(bits[i], errBits[i])}. */
    static void roundToOdd(Chunk c) {
        int[] b = c.bits;
        int[] s = c.errBits;
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
    private static void nearest(Chunk c, int i, double d) {
        float n = (float) d;
        c.f[i] = n;
        c.err[i] = (float) Math.signum(d - n);
    }

    /** {@code sum / k}; by the product with {@code r} where that is exact (nonzero). */
    private static double quotient(double sum, double k, double r) {
        return r != 0 ? sum * r : sum / k;
    }
}
