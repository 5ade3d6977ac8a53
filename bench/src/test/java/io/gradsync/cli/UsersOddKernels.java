package io.gradsync.cli;

import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.Parallel;

/** A user's kernels with scalars of every narrow Java type, and one whose Java method throws. */
public final class UsersOddKernels {
    private UsersOddKernels() {
    }

    public static void narrowScalars(IntArray y, IntArray x, boolean negate, char c, byte b, short s) {
        for (@Parallel int i = 0; i < y.getSize(); i++) {
            int v = x.get(i) + c + b + s;
            y.set(i, negate ? -v : v);
        }
    }

    /** Divides by its scalar, which compare passes as 1: fine; {@link #dividesByZero} passes 0. */
    public static void dividesByZero(IntArray y, IntArray x) {
        for (@Parallel int i = 0; i < y.getSize(); i++) {
            y.set(i, x.get(i) / (x.get(i) - x.get(i)));
        }
    }
}
