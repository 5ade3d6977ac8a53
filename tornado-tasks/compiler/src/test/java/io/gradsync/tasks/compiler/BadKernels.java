package io.gradsync.tasks.compiler;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.Parallel;

/** Kernels using constructs the compiler must reject, one construct each. */
@SuppressWarnings({"unused", "divzero"})
final class BadKernels {
    static int counter;

    private BadKernels() {
    }

    public static void allocatesObject(FloatArray x) {
        Object o = new Object();
        x.set(0, o == null ? 1f : 0f);
    }

    public static void allocatesArray(FloatArray x, int n) {
        float[] tmp = new float[n];
        x.set(0, tmp.length);
    }

    public static void javaArrayParameter(float[] x) {
    }

    public static void throwsException(FloatArray x) {
        if (x.getSize() == 0) {
            throw new IllegalStateException("empty");
        }
    }

    public static void tryCatch(FloatArray x) {
        try {
            x.set(0, 1f);
        } catch (RuntimeException e) {
            x.set(0, 2f);
        }
    }

    public static void synchronizedBlock(FloatArray x) {
        synchronized (x) {
            x.set(0, 1f);
        }
    }

    public static synchronized void synchronizedMethod(FloatArray x) {
        x.set(0, 1f);
    }

    public static void readsMutableStatic(FloatArray x) {
        x.set(0, counter);
    }

    public static void writesStatic(FloatArray x) {
        counter = 3;
    }

    public static void usesString(FloatArray x) {
        String s = "gradient";
        x.set(0, s.length());
    }

    static int factorial(int n) {
        return n <= 1 ? 1 : n * factorial(n - 1);
    }

    public static void recursion(FloatArray x) {
        x.set(0, factorial(5));
    }

    public static void lambda(FloatArray x) {
        Runnable r = () -> x.set(0, 1f);
        r.run();
    }


    public void instanceMethod(FloatArray x) {
        x.set(0, 1f);
    }

    public static float returnsValue(FloatArray x) {
        return x.get(0);
    }

    public static void nullReference(FloatArray x) {
        FloatArray y = null;
        x.set(0, y == x ? 1f : 0f);
    }

    public static void virtualCallOnArray(FloatArray x) {
        x.fill(0f);
    }

    public static void choosesArray(FloatArray a, FloatArray b, int k) {
        (k > 0 ? a : b).set(0, 1f);
    }

    public static void parallelStepTwo(FloatArray x) {
        for (@Parallel int i = 0; i < x.getSize(); i += 2) {
            x.set(i, 0f);
        }
    }

    public static void unsupportedMath(FloatArray x) {
        x.set(0, Math.addExact((int) x.get(0), 3));
    }

    public static void typeCheck(FloatArray x) {
        Object o = x;
        ((FloatArray) o).set(0, 1f);
    }

    public static void breakInParallelLoop(FloatArray x) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            if (x.get(i) < 0) {
                break;
            }
            x.set(i, 1f);
        }
    }

    public static void returnInParallelLoop(FloatArray x) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            if (x.get(i) < 0) {
                return;
            }
            x.set(i, 1f);
        }
    }

    public static void parallelInsideLoop(FloatArray x, int k) {
        for (int j = 0; j < k; j++) {
            for (@Parallel int i = 0; i < x.getSize(); i++) {
                x.set(i, x.get(i) * 2f);
            }
        }
    }

    public static void storeAfterParallelLoop(FloatArray x, FloatArray total) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, 1f);
        }
        total.set(0, x.get(0));
    }

    static void helperAllocates(FloatArray x) {
        x.set(0, new StringBuilder().length());
    }

    public static void callsBadHelper(FloatArray x) {
        helperAllocates(x);
    }
}
