package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;

/** What every device checks before launching a KernelContext kernel. */
final class LaunchChecks {
    private LaunchChecks() {
    }

    /**
     * A kernel that waits at a barrier needs every launched thread to be one of its own: the
     * threads past the end of a grid that is not whole groups return at once and would leave the
     * others waiting.
     */
    static void context(CompiledKernel kernel, LaunchShape shape) {
        if (kernel.usesWarps() && shape.groupThreads() % 32 != 0) {
            throw new IllegalArgumentException(kernel.entryName() + " reduces over warps of 32 threads, so its work groups must be"
                    + " whole warps: groups of " + shape.block() + "x" + shape.blockY() + "x" + shape.blockZ() + " are not");
        }
        if (kernel.usesBarrier() && shape.isPadded()) {
            throw new IllegalArgumentException(kernel.entryName() + " waits at a barrier, so its grid must be whole work groups: "
                    + shape.globalX() + "x" + shape.globalY() + "x" + shape.globalZ() + " threads in groups of "
                    + shape.block() + "x" + shape.blockY() + "x" + shape.blockZ() + " is not (choose a local size that divides the grid)");
        }
    }
}
