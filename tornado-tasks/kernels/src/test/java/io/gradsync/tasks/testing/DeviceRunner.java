package io.gradsync.tasks.testing;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;

/** Runs a compiled kernel on some device with arrays copied in and back out (test helper). */
public interface DeviceRunner {
    /** A short name for messages ("OpenCL", "CUDA"). */
    String name();

    /** Runs with one argument per Java parameter (null for a KernelContext); arrays are updated in place. */
    default void run(CompiledKernel kernel, Object[] args, long globalSize, long localSize) {
        int grid = (int) ((globalSize + localSize - 1) / localSize);
        run(kernel, args, new LaunchShape(grid, (int) localSize, 1, 1, 1, 1, (int) globalSize, 1, 1));
    }

    /** As {@link #run(CompiledKernel, Object[], long, long)} over any launch, 1-D to 3-D. */
    void run(CompiledKernel kernel, Object[] args, LaunchShape shape);
}
