package io.gradsync.sync.bucket;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.Parallel;

/**
 * Gradient scaling by a factor read from device memory: the clip factor changes every step, and
 * a task graph's scalar arguments are fixed when it is built, so it travels in a one-element array.
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
public final class ClipKernels {
    private ClipKernels() {
    }

    /** {@code x[i] *= factor[0]}. */
    public static void scaleBy(FloatArray x, FloatArray factor) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, x.get(i) * factor.get(0));
        }
    }

    /** {@code x[i] *= factor[0]} in fp32, rounded once to bf16. */
    public static void scaleByBf16(Bfloat16Array x, FloatArray factor) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, x.get(i) * factor.get(0));
        }
    }

    /** {@code x[i] *= factor[0]} in fp32, rounded once to fp16. */
    public static void scaleByF16(HalfArray x, FloatArray factor) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, x.get(i) * factor.get(0));
        }
    }
}
