package io.gradsync.tasks.testing;

import io.gradsync.tasks.compiler.CompiledKernel;

/** Runs a compiled kernel on some device with arrays copied in and back out (test helper). */
public interface DeviceRunner {
    /** A short name for messages ("OpenCL", "CUDA"). */
    String name();

    /** Runs with one argument per Java parameter (null for a KernelContext); arrays are updated in place. */
    void run(CompiledKernel kernel, Object[] args, long globalSize, long localSize);
}
