package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.KernelStyle;

import java.lang.reflect.Method;

/**
 * One built-in kernel: its device name, the Java method, and how it spreads work.
 *
 * @param name   entry / kernel name on the device (the Java method name)
 * @param method the static Java method, also the JVM implementation
 * @param style  how to launch it
 */
public record KernelSpec(String name, Method method, KernelStyle style) {

    /** Compiles (or fetches from the shared cache) this kernel. */
    public CompiledKernel compile() {
        return KernelCompiler.shared().compile(method);
    }
}
