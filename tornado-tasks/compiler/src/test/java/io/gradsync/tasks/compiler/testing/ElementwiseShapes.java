package io.gradsync.tasks.compiler.testing;

import io.gradsync.tasks.api.Atomics;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.Parallel;

/**
 * Hand-written @Parallel kernels on both sides of the element-wise rule ({@code ElementwiseLoop}):
 * {@code yes*} must be found element-wise, {@code no*} must not.
 */
public final class ElementwiseShapes {
    private ElementwiseShapes() {
    }

    static float twice(float x) {
        return x * 2f;
    }

    // ---- element-wise ----------------------------------------------------------------------

    /** The bound is a scalar, not an array length. */
    public static void yesScalarBound(FloatArray out, FloatArray in, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            out.set(i, in.get(i) * 2f);
        }
    }

    /**
     * Loads after another array's store (as an optimizer's step loads the weights after storing
     * its moments): element-wise, with the pairs that must lie apart in memory at a launch.
     */
    public static void yesLoadAfterAnotherStore(FloatArray w, FloatArray g, FloatArray m) {
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            float mi = 0.9f * m.get(i) + g.get(i);
            m.set(i, mi);
            w.set(i, w.get(i) - mi * g.get(i));
        }
    }

    /** Branches before the loop: a {@code StrictMath.pow} and an early return, as an optimizer's step has. */
    public static void yesBranchyPrologue(FloatArray out, FloatArray in, int step) {
        if (step < 0) {
            return;
        }
        float c = 1f - (float) StrictMath.pow(0.9, step);
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) / c);
        }
    }

    /** A thread's own array before the loop, indexed by an argument: element-wise, its index unproven. */
    public static void yesOwnArrayBeforeLoop(IntArray out, IntArray in, int k) {
        int[] table = new int[4];
        table[k & 7] = 3;
        int f = table[0] + table[1] + table[2] + table[3];
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, f * in.get(i));
        }
    }

    /** A call before the loop: inlined, straight-line code. */
    public static void yesCallBeforeLoop(FloatArray out, FloatArray in, float s) {
        float c = twice(s);
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) * c);
        }
    }

    /** The bound is a local copied from an array length. */
    public static void yesLocalBound(HalfArray out, HalfArray in) {
        int n = in.getSize();
        for (@Parallel int i = 0; i < n; i++) {
            out.set(i, in.get(i) + 1f);
        }
    }

    /** The index used as a value too: each lane gets its own. */
    public static void yesIndexAsValue(FloatArray out, Bfloat16Array in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) + i);
        }
    }

    /** An inlined call leaves blocks joined by jumps, still straight-line. */
    public static void yesInlinedCall(Bfloat16Array out, Bfloat16Array in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, twice(in.get(i)));
        }
    }

    /** Temporaries declared before the loop but assigned before use in each iteration. */
    public static void yesLocalReassigned(FloatArray out, FloatArray in) {
        float t = 0f;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            t = in.get(i) * 3f;
            out.set(i, t - 1f);
        }
    }

    /** 8-byte elements: two per 16-byte access. */
    public static void yesDoubles(DoubleArray out, DoubleArray in, FloatArray f) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) * f.get(i));
        }
    }

    /** Raw 16-bit patterns, loaded and stored, and the same array read twice. */
    public static void yesRawBits(Bfloat16Array out, HalfArray in, IntArray bits) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            short h = in.getBits(i);
            bits.set(i, h ^ in.getBits(i) + 7);
            out.setBits(i, (short) (h >> 1));
        }
    }

    /** Two loads of one array, a load of the stored array first: a read-modify-write. */
    public static void yesReadModifyWrite(FloatArray acc, FloatArray x) {
        for (@Parallel int i = 0; i < acc.getSize(); i++) {
            acc.set(i, acc.get(i) * x.get(i) + x.get(i));
        }
    }

    /** Only stores. */
    public static void yesFill(IntArray out, int v) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, v);
        }
    }

    // ---- not element-wise ------------------------------------------------------------------

    /** A loop before the loop: the code ahead of it may branch, not repeat. */
    public static void noLoopBeforeLoop(FloatArray out, FloatArray in, int step) {
        float c = 1f;
        for (int k = 0; k < step; k++) {
            c *= 0.9f;
        }
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) * c);
        }
    }

    /** Branches before the loop and inside it. */
    public static void noBranchAfterBranchyPrologue(FloatArray out, FloatArray in, int step) {
        float c = 1f - (float) StrictMath.pow(0.9, step);
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            float x = in.get(i);
            if (x > 1f) {
                x = 1f;
            }
            out.set(i, x / c);
        }
    }

    /** An array read on one branch before the loop. */
    public static void noBranchyLoadBeforeLoop(FloatArray out, FloatArray in, int step) {
        float c = step > 0 ? in.get(0) : 1f;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) * c);
        }
    }

    public static void noNeighbour(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i + 1));
        }
    }

    public static void noStrided(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(2 * i));
        }
    }

    public static void noOtherIndexWritten(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(out.getSize() - 1 - i, in.get(i));
        }
    }

    public static void noConstantIndex(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            out.set(0, in.get(i));
        }
    }

    public static void noInnerLoop(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            float s = 0f;
            for (int j = 0; j < 4; j++) {
                s += in.get(i);
            }
            out.set(i, s);
        }
    }

    public static void noBranch(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) > 0f ? 1f : 0f);
        }
    }

    public static void noConditionalStore(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            if (in.get(i) > 0f) {
                out.set(i, 1f);
            }
        }
    }

    /** A value carried from one iteration of a thread to its next: lanes would change the result. */
    public static void noCarriedValue(FloatArray out, FloatArray in) {
        float s = 0f;
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            s += in.get(i);
            out.set(i, s);
        }
    }

    public static void noLoadAfterStore(FloatArray out, FloatArray in, FloatArray out2) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
            out2.set(i, out.get(i));
        }
    }

    public static void noStoredTwice(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            float v = in.get(i);
            out.set(i, v);
            out.set(i, v * 2f);
        }
    }

    public static void noNonZeroStart(FloatArray out, FloatArray in) {
        for (@Parallel int i = 1; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }

    public static void noBoundExpression(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < out.getSize() - 1; i++) {
            out.set(i, in.get(i));
        }
    }

    public static void noAtomic(FloatArray out, FloatArray in) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            Atomics.add(out, i, in.get(i));
        }
    }

    public static void noLoadBeforeLoop(FloatArray out, FloatArray in) {
        float first = in.get(0);
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i) - first);
        }
    }

    /** 8- and 2-byte elements: a 16-byte access of one is a 4-byte access of the other. */
    public static void noMixedWidths(DoubleArray out, Bfloat16Array in) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, in.get(i));
        }
    }

    /** No array access in the loop at all. */
    public static void noAccess(FloatArray out, int n) {
        int s = 0;
        for (@Parallel int i = 0; i < n; i++) {
            s = i;
        }
    }
}
