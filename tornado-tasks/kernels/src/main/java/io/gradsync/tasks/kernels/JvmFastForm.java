package io.gradsync.tasks.kernels;

/**
 * The JVM-only form of a built-in kernel ({@link KernelSpec#jvmFastForm()}): the kernel's results,
 * bit for bit where its tests say so, the way a CPU computes them well. JVM devices run it in place
 * of the kernel's Java method, which stays the reference and the source of the device forms.
 *
 * <p>An element-wise form shares long arrays among the cores, a slice a task, as JVM devices run
 * loops; arrays of a confined arena stay on the calling thread, as does all work that a caller
 * which shares its own work among the cores runs inside {@code CoreSpread.onCallersThread}.
 *
 * <p>Thread-safety: stateless (scratch is per thread); calls from several threads at once on
 * disjoint outputs are safe.
 */
@FunctionalInterface
public interface JvmFastForm {
    /**
     * Runs the form on a JVM device's arguments: one per Java parameter of the kernel, in order,
     * KernelContext excluded. Returns false, having changed nothing, where the form does not apply
     * (short or overlapping arrays, other argument types); the caller then runs the kernel itself.
     */
    boolean run(Object... args);
}
