package io.gradsync.cli;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.Parallel;

/**
 * Users' kernels for {@code gradsync compare} with the bounds checks on and off
 * ({@code scripts/gpu-node-speed checks}): the README's AdamW (it loads {@code w} after storing
 * {@code m}, and branches before its loop in {@code StrictMath.pow}), and a saxpy up to a scalar
 * argument: element-wise loops, whose vector forms run unchecked where their bounds are within
 * their arrays; and an AdamW that clips its gradients, whose branches leave it its scalar form,
 * checked access by access.
 */
public final class CheckedCostKernels {
    private CheckedCostKernels() {
    }

    public static void adamW(FloatArray w, FloatArray g, FloatArray m, FloatArray v, float lr, float decay, int step) {
        float c1 = 1f - (float) StrictMath.pow(0.9, step);
        float c2 = 1f - (float) StrictMath.pow(0.999, step);
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            float mi = 0.9f * m.get(i) + 0.1f * g.get(i);
            float vi = 0.999f * v.get(i) + 0.001f * g.get(i) * g.get(i);
            m.set(i, mi);
            v.set(i, vi);
            w.set(i, w.get(i) - lr * ((mi / c1) / ((float) Math.sqrt(vi / c2) + 1e-8f) + decay * w.get(i)));
        }
    }

    /**
     * AdamW on gradients clipped to [-1, 1] element by element: the clipping branches, so the body
     * is no element-wise loop and runs its scalar form, checked access by access.
     */
    public static void adamWClipped(FloatArray w, FloatArray g, FloatArray m, FloatArray v, float lr, float decay, int step) {
        float c1 = 1f - (float) StrictMath.pow(0.9, step);
        float c2 = 1f - (float) StrictMath.pow(0.999, step);
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            float gi = g.get(i);
            if (gi > 1f) {
                gi = 1f;
            } else if (gi < -1f) {
                gi = -1f;
            }
            float mi = 0.9f * m.get(i) + 0.1f * gi;
            float vi = 0.999f * v.get(i) + 0.001f * gi * gi;
            m.set(i, mi);
            v.set(i, vi);
            w.set(i, w.get(i) - lr * ((mi / c1) / ((float) Math.sqrt(vi / c2) + 1e-8f) + decay * w.get(i)));
        }
    }

    public static void saxpyUpTo(FloatArray y, FloatArray x, float a, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            y.set(i, a * x.get(i) + y.get(i));
        }
    }
}
