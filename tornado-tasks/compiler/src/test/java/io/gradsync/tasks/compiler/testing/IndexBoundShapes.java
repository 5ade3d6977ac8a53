package io.gradsync.tasks.compiler.testing;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.Parallel;

/** Kernels whose global index is, or is not, bounded by one scalar parameter ({@code IndexBoundTest}). */
public final class IndexBoundShapes {
    private IndexBoundShapes() {
    }

    /** Not element-wise (loads after stores), bounded by n. */
    public static void n_storesThenLoads(FloatArray w, FloatArray m, float rate, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            m.set(i, 0.9f * m.get(i) + w.get(i));
            w.set(i, w.get(i) - rate * m.get(i));
        }
    }

    /** A prologue with branches (StrictMath's code), bounded by n. */
    public static void n_branchyPrologue(FloatArray w, FloatArray g, int step, int n) {
        float c = 1f - (float) StrictMath.pow(0.9, step);
        for (@Parallel int i = 0; i < n; i++) {
            w.set(i, w.get(i) - g.get(i) / c);
        }
    }

    public static void n_elementwise(FloatArray out, FloatArray in, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            out.set(i, in.get(i) * 2f);
        }
    }

    public static void n_context(KernelContext ctx, FloatArray out, int n) {
        int i = ctx.globalIdx();
        if (i < n) {
            out.set(i, 1f);
        }
    }

    public static void none_arrayLength(FloatArray out, int step) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, step);
        }
    }

    /** The bound is assigned before the loop: not the argument's value. */
    public static void none_assigned(FloatArray out, int n) {
        n = n - 1;
        for (@Parallel int i = 0; i < n; i++) {
            out.set(i, 1f);
        }
    }

    /** Two scalars compared with the index: which is the element count is not known. */
    public static void none_twoScalars(FloatArray out, int n, int k) {
        for (@Parallel int i = 0; i < n; i++) {
            if (i < k) {
                out.set(i, 1f);
            }
        }
    }

    /** The scalar bounds a loop of each thread, not the global index. */
    public static void none_innerLoop(FloatArray out, int reps) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            float s = 0f;
            for (int r = 0; r < reps; r++) {
                s += 1f;
            }
            out.set(i, s);
        }
    }
}
