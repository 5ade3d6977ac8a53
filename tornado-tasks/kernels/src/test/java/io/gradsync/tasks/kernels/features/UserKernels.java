package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.*;
import io.gradsync.tasks.compiler.testing.*;

import io.gradsync.tasks.api.Atomics;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.api.MemoryOrder;
import io.gradsync.tasks.api.MemoryScope;
import io.gradsync.tasks.api.Parallel;

/** Kernels as users write them (issue 14): math, casts, switches, private and group arrays, atomics, grids. */
final class UserKernels {
    static final int[] SQUARES = {0, 1, 4, 9, 16, 25, 36, 49};
    static final double[] WEIGHTS = {0.5, -0.25, 0.125, 3.0};

    private UserKernels() {
    }

    // ---------------------------------------------------------------- StrictMath, exact

    public static void strictLog(DoubleArray x, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.log(x.get(i)));
        }
    }

    public static void strictLog1p(DoubleArray x, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.log1p(x.get(i)));
        }
    }

    public static void strictExpm1(DoubleArray x, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.expm1(x.get(i)));
        }
    }

    public static void strictExp(DoubleArray x, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.exp(x.get(i)));
        }
    }

    public static void strictPow(DoubleArray x, DoubleArray y, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.pow(x.get(i), y.get(i)));
        }
    }

    public static void strictTanh(DoubleArray x, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.tanh(x.get(i)));
        }
    }

    public static void strictSin(DoubleArray x, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.sin(x.get(i)));
        }
    }

    public static void strictCos(DoubleArray x, DoubleArray out) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, StrictMath.cos(x.get(i)));
        }
    }

    /** The functions Java specifies exactly, on doubles: floor, ceil, rint, round, signum, abs. */
    public static void exactDouble(DoubleArray x, DoubleArray floor, DoubleArray ceil, DoubleArray rint, LongArray round, DoubleArray signum) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            double v = x.get(i);
            floor.set(i, Math.floor(v));
            ceil.set(i, StrictMath.ceil(v));
            rint.set(i, Math.rint(v));
            round.set(i, Math.round(v));
            signum.set(i, Math.signum(v) + Math.abs(v) * 0.0);
        }
    }

    /** The same on floats, and the float exp/log a loss computes. */
    public static void exactFloat(FloatArray x, FloatArray floor, FloatArray ceil, IntArray round, FloatArray signum, FloatArray exp, FloatArray log) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            float v = x.get(i);
            floor.set(i, (float) Math.floor(v));
            ceil.set(i, (float) Math.ceil(v));
            round.set(i, Math.round(v));
            signum.set(i, Math.signum(v));
            exp.set(i, (float) StrictMath.exp(v));
            log.set(i, (float) StrictMath.log(v));
        }
    }

    /** Math's (not StrictMath's) functions: within their ulp bounds of the JVM's. */
    public static void mathDouble(DoubleArray x, DoubleArray y, DoubleArray log, DoubleArray exp, DoubleArray pow, DoubleArray tanh,
                                  DoubleArray sin, DoubleArray cos, DoubleArray log1p, DoubleArray expm1) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            double v = x.get(i);
            log.set(i, Math.log(v));
            exp.set(i, Math.exp(v));
            pow.set(i, Math.pow(v, y.get(i)));
            tanh.set(i, Math.tanh(v));
            sin.set(i, Math.sin(v));
            cos.set(i, Math.cos(v));
            log1p.set(i, Math.log1p(v));
            expm1.set(i, Math.expm1(v));
        }
    }

    public static void floorModDiv(IntArray a, IntArray b, IntArray mod, IntArray div, LongArray la, LongArray lb, LongArray lmod, LongArray ldiv) {
        for (@Parallel int i = 0; i < a.getSize(); i++) {
            mod.set(i, Math.floorMod(a.get(i), b.get(i)));
            div.set(i, Math.floorDiv(a.get(i), b.get(i)));
            lmod.set(i, Math.floorMod(la.get(i), lb.get(i)));
            ldiv.set(i, Math.floorDiv(la.get(i), lb.get(i)));
        }
    }

    // ---------------------------------------------------------------- integers and casts

    /** Java's / and % at MIN / -1 (the divisors are never 0: Java would throw). */
    public static void integerDivision(IntArray a, IntArray b, IntArray q, IntArray r, LongArray la, LongArray lb, LongArray lq, LongArray lr) {
        for (@Parallel int i = 0; i < a.getSize(); i++) {
            q.set(i, a.get(i) / b.get(i));
            r.set(i, a.get(i) % b.get(i));
            lq.set(i, la.get(i) / lb.get(i));
            lr.set(i, la.get(i) % lb.get(i));
        }
    }

    /**
     * {@code Math.abs(MIN)} is MIN in Java, negative: it flows into {@code %} and {@code /} (by a
     * variable and by constants), a comparison, and long arithmetic. A target's abs that its
     * optimizer takes for non-negative gets every one of them wrong.
     */
    public static void absOfMin(IntArray a, IntArray n, IntArray rem, IntArray quo, IntArray byConstants, IntArray negative,
                                LongArray la, LongArray ln, LongArray lrem, LongArray larith) {
        for (@Parallel int i = 0; i < a.getSize(); i++) {
            int x = Math.abs(a.get(i));
            rem.set(i, x % n.get(i));
            quo.set(i, x / n.get(i));
            byConstants.set(i, x % 7 + x / 3 * 5);
            negative.set(i, x < 0 ? 1 : 0);
            long y = Math.abs(la.get(i));
            lrem.set(i, y % ln.get(i));
            larith.set(i, (y >> 1) + (y < 0 ? 1L : 0L) + y / 3 + y % 1000);
        }
    }

    /** Shift counts outside 0..31 (0..63 for long): Java takes their low bits. */
    public static void shiftCounts(IntArray a, IntArray count, IntArray out, LongArray la, LongArray lout) {
        for (@Parallel int i = 0; i < a.getSize(); i++) {
            int c = count.get(i);
            out.set(i, (a.get(i) << c) ^ (a.get(i) >> c) ^ (a.get(i) >>> (c + 7)));
            lout.set(i, (la.get(i) << c) ^ (la.get(i) >> c) ^ (la.get(i) >>> (c + 7)));
        }
    }

    /** NaN, infinities and out-of-range values to int and long, from float and double. */
    public static void casts(FloatArray f, DoubleArray d, IntArray fi, LongArray fl, IntArray di, LongArray dl, IntArray narrow) {
        for (@Parallel int i = 0; i < f.getSize(); i++) {
            fi.set(i, (int) f.get(i));
            fl.set(i, (long) f.get(i));
            di.set(i, (int) d.get(i));
            dl.set(i, (long) d.get(i));
            narrow.set(i, (byte) d.get(i) + (short) f.get(i) * 3 + (char) f.get(i));
        }
    }

    /** Math.min and max of floats and doubles at NaN, both zeros and infinities; constants on either side. */
    public static void minMax(FloatArray a, FloatArray b, FloatArray fmin, FloatArray fmax, FloatArray fconst,
                              DoubleArray c, DoubleArray d, DoubleArray dmin, DoubleArray dmax, DoubleArray dconst) {
        for (@Parallel int i = 0; i < a.getSize(); i++) {
            fmin.set(i, Math.min(a.get(i), b.get(i)));
            fmax.set(i, Math.max(a.get(i), b.get(i)));
            fconst.set(i, Math.min(-0f, a.get(i)) - Math.max(b.get(i), 0f));
            dmin.set(i, Math.min(c.get(i), d.get(i)));
            dmax.set(i, Math.max(c.get(i), d.get(i)));
            dconst.set(i, Math.min(d.get(i), 0.0) - Math.max(-0.0, c.get(i)));
        }
    }

    public static void remainders(FloatArray a, FloatArray b, FloatArray out, DoubleArray c, DoubleArray d, DoubleArray dout) {
        for (@Parallel int i = 0; i < a.getSize(); i++) {
            out.set(i, a.get(i) % b.get(i));
            dout.set(i, c.get(i) % d.get(i));
        }
    }

    // ---------------------------------------------------------------- parameters and names

    /** Boolean, char, byte and short parameters; parameters and locals named as OpenCL C keywords or in other scripts. */
    public static void kernel(FloatArray half, boolean local, char global, byte constant, short größe, float α) {
        for (@Parallel int i = 0; i < half.getSize(); i++) {
            float kernel = local ? α : -α;
            int restrict = global + constant * 2 + größe * 3;
            half.set(i, kernel * restrict + i);
        }
    }

    /** A helper given a constant: the branch it decides is folded, so the path only Java can run is never compiled. */
    public static void constantArguments(FloatArray x) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, pick(x.get(i), true));
        }
    }

    private static float pick(float v, boolean fast) {
        if (fast) {
            return v * 2;
        }
        throw new IllegalStateException("not on a device");
    }

    // ---------------------------------------------------------------- switch, private arrays, tables

    /** A dense switch (tableswitch) and a sparse one (lookupswitch), as an activation choice. */
    public static void activation(FloatArray x, FloatArray out, IntArray kinds) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            float v = x.get(i);
            float y;
            switch (kinds.get(i)) {
                case 0 -> y = Math.max(v, 0f);
                case 1 -> y = v > 0 ? v : 0.01f * v;
                case 2 -> y = (float) StrictMath.tanh(v);
                case 3 -> y = v / (1f + Math.abs(v));
                default -> y = v;
            }
            int code = switch (kinds.get(i) * 1000) {
                case -7000 -> 1;
                case 0 -> 2;
                case 3000 -> 3;
                case 1_000_000 -> 4;
                default -> 5;
            };
            out.set(i, y + code);
        }
    }

    /** Private arrays of every type, passed to a helper, with Java's truncating stores; static final tables. */
    public static void privateArrays(FloatArray x, FloatArray out, IntArray ints) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            float[] w = new float[8];
            for (int j = 0; j < w.length; j++) {
                w[j] = x.get(i) * (j + 1);
            }
            byte[] b = new byte[3];
            short[] s = new short[2];
            char[] c = new char[2];
            boolean[] z = new boolean[2];
            long[] l = new long[2];
            double[] d = new double[WEIGHTS.length];
            int k = (int) (x.get(i) * 1000);
            b[0] = (byte) k;
            b[1] += 100;
            b[1] += 100;
            s[0] = (short) (k * 77);
            c[0] = (char) k;
            z[i & 1] = true;
            l[1] = (long) k * k * k;
            for (int j = 0; j < d.length; j++) {
                d[j] = WEIGHTS[j] * x.get(i);
            }
            out.set(i, sum(w) + (float) (d[0] + d[1] + d[2] + d[3]));
            ints.set(i, b[0] + b[1] + s[0] + c[0] + (z[0] ? 1 : 2) + (int) l[1] + SQUARES[i & 7] + b.length);
        }
    }

    private static float sum(float[] a) {
        float s = 0;
        for (float v : a) {
            s += v;
        }
        return s;
    }

    // ---------------------------------------------------------------- KernelContext: grids, groups, local memory

    /** Scales by a one-element factor: the launch size cannot come from the first array. */
    public static void scaleByFactor(KernelContext ctx, FloatArray factor, FloatArray x) {
        int i = ctx.globalIdx();
        x.set(i, x.get(i) * factor.get(0) + ctx.globalSize());
    }

    /** A 2-D grid: out[r][c] = in[c][r], plus where each thread sat. */
    public static void transpose(KernelContext ctx, FloatArray in, FloatArray out, IntArray where, int rows, int cols) {
        int c = ctx.globalIdx();
        int r = ctx.globalIdy();
        out.set(c * rows + r, in.get(r * cols + c));
        where.set(r * cols + c, ctx.localIdx() + 100 * ctx.localIdy() + 10_000 * ctx.groupIdx() + 1_000_000 * ctx.groupIdy()
                + ctx.globalSize(1) * 7 + ctx.localSize(1) * 3 + ctx.groupCount(0));
    }

    /** A 3-D grid writing every coordinate it can ask for. */
    public static void coordinates(KernelContext ctx, IntArray out) {
        int x = ctx.globalIdx();
        int y = ctx.globalIdy();
        int z = ctx.globalIdz();
        int at = (z * ctx.globalSize(1) + y) * ctx.globalSize(0) + x;
        out.set(at, ctx.localIdz() * 1_000_000 + ctx.groupIdz() * 100_000 + ctx.localIdy() * 1000 + ctx.groupIdy() * 100
                + ctx.localIdx() * 10 + ctx.groupIdx() + ctx.groupCount(2) + ctx.localSize(2));
    }

    /** Sums of each group's 64 elements by a tree in group-local memory, with barriers. */
    public static void groupSums(KernelContext ctx, FloatArray x, FloatArray sums) {
        float[] tile = ctx.allocateFloatLocalArray(64);
        int t = ctx.localIdx();
        tile[t] = x.get(ctx.globalIdx());
        ctx.localBarrier();
        for (int half = 32; half > 0; half >>= 1) {
            if (t < half) {
                tile[t] += tile[t + half];
            }
            ctx.localBarrier();
        }
        if (t == 0) {
            sums.set(ctx.groupIdx(), tile[0]);
        }
    }

    /** Warp sums and maxima of float and int, written by every lane. */
    public static void warps(KernelContext ctx, FloatArray x, IntArray xi, FloatArray sums, FloatArray maxes, IntArray isums, IntArray imaxes) {
        int i = ctx.globalIdy() * ctx.globalSize(0) + ctx.globalIdx();
        float s = ctx.warpSum(x.get(i));
        float m = ctx.warpMax(x.get(i));
        int si = ctx.warpSum(xi.get(i));
        int mi = ctx.warpMax(xi.get(i));
        sums.set(i, s);
        maxes.set(i, m);
        isums.set(i, si);
        imaxes.set(i, mi);
    }

    // ---------------------------------------------------------------- atomics

    /** A histogram, a running max, a CAS-claimed slot and flags, with scopes and orders. */
    public static void atomics(KernelContext ctx, IntArray data, IntArray bins, IntArray maxima, LongArray total,
                               FloatArray fmax, IntArray claimed, IntArray flags, FloatArray fsum) {
        int i = ctx.globalIdx();
        int v = data.get(i);
        Atomics.getAndAdd(bins, v & 15, 1, MemoryScope.DEVICE, MemoryOrder.RELAXED);
        Atomics.getAndMax(maxima, 0, v, MemoryScope.DEVICE, MemoryOrder.ACQ_REL);
        Atomics.getAndMin(maxima, 1, v, MemoryScope.SYSTEM, MemoryOrder.SEQ_CST);
        Atomics.getAndAdd(total, 0, (long) v, MemoryScope.DEVICE, MemoryOrder.RELAXED);
        Atomics.getAndMax(total, 1, (long) v * v, MemoryScope.GROUP, MemoryOrder.RELAXED);
        Atomics.getAndMax(fmax, 0, v * 0.5f, MemoryScope.DEVICE, MemoryOrder.RELAXED);
        Atomics.getAndMin(fmax, 1, v * 0.5f, MemoryScope.DEVICE, MemoryOrder.RELAXED);
        Atomics.getAndAdd(fsum, 0, 1f, MemoryScope.DEVICE, MemoryOrder.RELAXED);
        // exactly one thread claims the slot; the winner is any thread, so only the count is checked
        if (Atomics.compareAndExchange(claimed, 0, 0, i + 1, MemoryScope.DEVICE, MemoryOrder.ACQ_REL) == 0) {
            Atomics.getAndAdd(claimed, 1, 1, MemoryScope.DEVICE, MemoryOrder.RELAXED);
        }
        int previous = Atomics.getAndSet(flags, i, 7, MemoryScope.DEVICE, MemoryOrder.RELEASE);
        Atomics.store(flags, i + data.getSize(), previous + Atomics.load(flags, i, MemoryScope.DEVICE, MemoryOrder.ACQUIRE),
                MemoryScope.SYSTEM, MemoryOrder.RELEASE);
    }

    // ---------------------------------------------------------------- rejected, JVM only

    /**
     * An optimizer's step as users write it: bias corrections from {@code StrictMath.pow} ahead of
     * the loop (branches there), the weights loaded after the moments are stored. Element-wise.
     */
    public static void adamStep(FloatArray w, FloatArray g, FloatArray m, FloatArray v, float lr, int step) {
        float c1 = 1f - (float) StrictMath.pow(0.9, step);
        float c2 = 1f - (float) StrictMath.pow(0.999, step);
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            float mi = 0.9f * m.get(i) + 0.1f * g.get(i);
            float vi = 0.999f * v.get(i) + 0.001f * g.get(i) * g.get(i);
            m.set(i, mi);
            v.set(i, vi);
            w.set(i, w.get(i) - lr * ((mi / c1) / ((float) Math.sqrt(vi / c2) + 1e-8f) + 0.01f * w.get(i)));
        }
    }

    /** Uses what no device has (an exception handler): JVM devices run it as Java. */
    public static void javaOnly(FloatArray x) {
        for (int i = 0; i < x.getSize(); i++) {
            try {
                x.set(i, Float.parseFloat("1.5") + x.get(i));
            } catch (NumberFormatException e) {
                x.set(i, -1f);
            }
        }
    }
}
