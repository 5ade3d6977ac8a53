package io.gradsync.tasks.compiler;

/** How a kernel spreads its work over threads; decides how a runtime launches it. */
public enum KernelStyle {
    /**
     * Takes a {@code KernelContext}: every thread runs the body once with its own global index;
     * the kernel checks its own bounds. Launch with global size >= the work size (on the JVM, run
     * the method once per index with the same global size).
     */
    CONTEXT,
    /**
     * Has a {@code @Parallel} loop, compiled to a grid-stride loop: correct for any global size
     * (on the JVM, call the method once).
     */
    PARALLEL_LOOP,
    /** Neither: only global thread 0 does the work on a device (on the JVM, call the method once). */
    SERIAL
}
