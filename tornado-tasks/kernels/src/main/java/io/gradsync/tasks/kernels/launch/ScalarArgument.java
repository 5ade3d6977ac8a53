package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.ir.KernelParam;

/**
 * The value a scalar kernel argument passes to a device: numbers as they are, and the Java types
 * that a device holds as an int ({@code boolean} as 0 or 1, {@code char} as its code unit), as
 * the compiled kernel reads them.
 */
final class ScalarArgument {
    private ScalarArgument() {
    }

    static Number of(CompiledKernel kernel, KernelParam p, Object arg) {
        return switch (arg) {
            case Number n -> n;
            case Boolean b -> b ? 1 : 0;
            case Character c -> (int) c;
            case null, default -> throw new IllegalArgumentException(kernel.entryName() + ": argument " + p.name()
                    + " must be a number, boolean or char, got " + (arg == null ? "null" : arg + " (" + arg.getClass().getSimpleName() + ")"));
        };
    }
}
