package io.gradsync.tasks.compiler.testing;

import io.gradsync.tasks.api.Atomics;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.api.Parallel;

/** Kernels that exercise each supported construct; compared against their own Java runs. */
public final class FeatureKernels {
    /** Not a compile-time constant: javac emits getstatic, the compiler reads the value. */
    static final float SCALE = computeScale();
    static final long BIG = Long.parseLong("3000000007");
    static final int SHIFT = 3;

    private FeatureKernels() {
    }

    private static float computeScale() {
        return 0.375f;
    }

    static int mix(int x, int y) {
        return (x >> SHIFT) ^ (y >>> 5);
    }

    /** Static methods of interfaces inline like any other. */
    interface Shapes {
        static float square(float v) {
            return v * v;
        }
    }

    static float clampUnit(float v) {
        if (v > 1f) {
            return 1f;
        } else if (v < -1f) {
            return -1f;
        }
        return v;
    }

    static float deep(float v) {
        return clampUnit(v) * 2f + clampUnit(-v) + Shapes.square(clampUnit(v));
    }

    public static void intOps(IntArray in, IntArray out, LongArray lout) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            int x = in.get(i);
            int d = (x & 15) + 1;
            int r = mix(x, i) + (x << 7) - x / d + x % d + (byte) x + (short) x + (char) x
                    + Math.abs(x) + Math.min(x, 5) + Math.max(x, -5) + (x << i) + (x >> (i + 30)) - (-x) + (x | i) * 3;
            out.set(i, r);
            long y = (long) x * BIG;
            long z = (y >>> 3) ^ (y << x) + y / 13 - y % 11 + Math.abs(y) + Math.min(y, 7L) + Math.max(y, -7L) + (long) x * i;
            lout.set(i, z + (y > z ? 1 : 0) + (y == z ? 2 : 0) + (int) z);
        }
    }

    public static void floatOps(FloatArray in, FloatArray out, IntArray iout, LongArray lout) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            float x = in.get(i);
            float y = x > 0 ? x * SCALE : -x;
            double d = x * 1.5;
            float z = (float) Math.sqrt(Math.abs(d)) + Math.fma(x, y, 1f) + Math.min(x, y) + Math.max(x, 0.25f)
                    + (float) Math.fma(d, d, 0.5) + (float) Math.min(d, -0.0) + Math.abs(x) - deep(x);
            out.set(i, z + (float) (d / 3.0) + (float) (long) d + (float) (int) x);
            int flags = (x < y ? 1 : 0) | (x != y ? 2 : 0) | (Float.isNaN(x) ? 4 : 0) | (x >= y ? 8 : 0)
                    | (d <= 2.0 ? 16 : 0) | (x == 0f ? 32 : 0) | (Float.isFinite(x) ? 64 : 0);
            iout.set(i, (int) (x * 1e6f) + (flags << 20) + Float.floatToRawIntBits(y) % 1000 + Float.compare(x, y) * 7);
            lout.set(i, (long) (d * 1e12) + Double.doubleToRawLongBits(d) % 1000 + (long) (x * 3e9f));
        }
    }

    public static void loops(FloatArray in, FloatArray out, int k) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            float acc = 0f;
            for (int j = 0; j < k; j++) {
                int idx = (i + j) % in.getSize();
                float v = in.get(idx);
                if (v < 0) {
                    continue;
                }
                acc += v * (j + 1);
                if (acc > 100f) {
                    break;
                }
            }
            int n = 0;
            while (n < 3 && acc > 1f) {
                acc *= 0.5f;
                n++;
            }
            out.set(i, acc + n);
        }
    }

    /** A helper that takes the KernelContext and an array: references pass into inlined calls. */
    static int index(KernelContext ctx, FloatArray bound) {
        int g = ctx.globalIdx();
        return g < bound.getSize() ? g : -1;
    }

    public static void contextStyle(KernelContext ctx, FloatArray x, FloatArray out, IntArray ids) {
        int g = index(ctx, x);
        if (g < 0) {
            return;
        }
        if (g < x.getSize()) {
            out.set(g, x.get(g) * 2f);
            ids.set(g, ctx.localIdx() + 1000 * ctx.groupIdx() + (ctx.localSize() << 20));
        }
    }

    public static void serial(FloatArray x, FloatArray total) {
        float s = 0f;
        for (int i = 0; i < x.getSize(); i++) {
            s += x.get(i);
        }
        total.set(0, s);
    }

    public static void halves(HalfArray h, Bfloat16Array b, IntArray bits, FloatArray out) {
        for (@Parallel int i = 0; i < h.getSize(); i++) {
            float f = out.get(i);
            short hb = HalfFloats.floatToHalf(f);
            short bb = HalfFloats.floatToBf16(f);
            h.setBits(i, hb);
            b.set(i, HalfFloats.halfToFloat(hb) + HalfFloats.bf16ToFloat(bb));
            bits.set(i, (hb << 16) ^ bb ^ Float.floatToFloat16(f) ^ b.getBits(i));
            out.set(i, Float.float16ToFloat(h.getBits(i)) - f);
        }
    }

    public static void atomics(KernelContext ctx, FloatArray x, FloatArray sum, IntArray count) {
        int g = ctx.globalIdx();
        if (g < x.getSize()) {
            Atomics.add(sum, g % 4, x.get(g));
            Atomics.add(count, 0, 1);
        }
    }

    /** Float to integer conversions at the edges: NaN gives 0, out-of-range values saturate. */
    public static void conversions(FloatArray in, IntArray ints, LongArray longs) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            float x = in.get(i);
            double d = x * 1e10;
            ints.set(i, (int) x ^ ((int) d << 1) ^ ((char) x << 3) ^ ((byte) (int) x << 5) ^ (short) (long) d);
            longs.set(i, (long) x * 31 + (long) d + (long) (float) (long) d);
        }
    }

    public static void expKernel(FloatArray in, FloatArray out) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            out.set(i, (float) Math.exp(in.get(i) * 30.0));
        }
    }
}
