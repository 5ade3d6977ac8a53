package io.gradsync.cli;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.Parallel;

/**
 * Users' kernels for {@code gradsync compare} with the bounds checks on and off
 * ({@code scripts/gpu-node-speed checks}): the README's AdamW, no element-wise loop (it loads
 * {@code w} after storing {@code m}), which runs its checked scalar form; and a saxpy up to a scalar
 * argument, an element-wise loop whose vector form runs unchecked where the scalar is within its arrays.
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
     * The same step with its bias corrections passed in: an element-wise loop that loads {@code w}
     * after storing {@code m} and {@code v}, whose vector form runs where the arrays lie apart.
     */
    public static void adamWCorrected(FloatArray w, FloatArray g, FloatArray m, FloatArray v, float lr, float decay, float c1,
            float c2) {
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            float mi = 0.9f * m.get(i) + 0.1f * g.get(i);
            float vi = 0.999f * v.get(i) + 0.001f * g.get(i) * g.get(i);
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
