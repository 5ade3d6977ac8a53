package io.gradsync.tasks.compiler;

import io.gradsync.tasks.api.KernelFunctions;

import java.lang.reflect.Method;

/**
 * Resolves a kernel method reference to its static method (see {@link KernelFunctions#methodOf}).
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
public final class MethodReferences {
    private MethodReferences() {
    }

    public static Method resolve(KernelFunctions.Kernel ref) {
        return KernelFunctions.methodOf(ref);
    }
}
