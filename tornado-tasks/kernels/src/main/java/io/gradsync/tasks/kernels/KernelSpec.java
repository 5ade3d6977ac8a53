package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;

import java.lang.reflect.Method;

/**
 * One built-in kernel: its device name, the Java method, and how it spreads work.
 *
 * @param name   entry / kernel name on the device (the Java method name)
 * @param method the static Java method, also the JVM implementation
 * @param style  how to launch it
 * @param maxThreads the most threads worth launching (0: one per element); grid-stride
 *                   reductions that add one partial per thread atomically are bounded
 */
public record KernelSpec(String name, Method method, KernelStyle style, int maxThreads) {

    /** The launch for {@code workItems} elements (the first array's length). */
    public LaunchShape launchShape(long workItems) {
        return LaunchShape.forWork(style, workItems, maxThreads);
    }

    /** Compiles (or fetches from the shared cache) this kernel. */
    public CompiledKernel compile() {
        return KernelCompiler.shared().compile(method);
    }
}
