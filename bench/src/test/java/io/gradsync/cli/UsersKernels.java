package io.gradsync.cli;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.Parallel;

/** Kernels as a user writes them, for {@code gradsync compare --kernels io.gradsync.cli.UsersKernels}. */
public final class UsersKernels {
    private UsersKernels() {
    }

    public static void saxpy(FloatArray y, FloatArray x, float a) {
        for (@Parallel int i = 0; i < y.getSize(); i++) {
            y.set(i, a * x.get(i) + y.get(i));
        }
    }

    /** Bounded by a scalar (compare passes the arrays' element count for {@code n}); loads after stores. */
    public static void momentumUpTo(FloatArray w, FloatArray m, float rate, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            m.set(i, 0.9f * m.get(i) + w.get(i));
            w.set(i, w.get(i) - rate * m.get(i));
        }
    }

    public static void halve(KernelContext ctx, FloatArray out, FloatArray in) {
        int i = ctx.globalIdx();
        if (i < out.getSize()) {
            out.set(i, in.get(i) * 0.5f);
        }
    }

    /** Group-local memory and a barrier: its group size is its own, so compare leaves it out. */
    public static void pairSums(KernelContext ctx, FloatArray out, FloatArray in) {
        float[] pair = ctx.allocateFloatLocalArray(2);
        int t = ctx.localIdx();
        int i = ctx.globalIdx();
        if (t < 2) {
            pair[t] = in.get(i);
        }
        ctx.localBarrier();
        if (t == 0) {
            out.set(i, pair[0] + pair[1]);
        }
    }

    /** Not a kernel, and not named as left out: it takes no kernel's types. */
    public static void main(String[] args) {
        System.out.println(describe());
    }

    /** Not a kernel: it returns a value. */
    public static String describe() {
        return "two kernels";
    }
}
