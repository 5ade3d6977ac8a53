/**
 * The gradient kernels ({@link io.gradsync.tasks.kernels.GradientKernels}), their registry
 * ({@link io.gradsync.tasks.kernels.BuiltinKernels}), generated-source export
 * ({@link io.gradsync.tasks.kernels.KernelSources#emitAll}), and launching them on the runtimes:
 * {@link io.gradsync.tasks.kernels.launch.CudaKernels}, {@link io.gradsync.tasks.kernels.launch.OpenClKernels}
 * (arguments as {@link io.gradsync.tasks.kernels.DeviceSlice}s and numbers, prepared once, launched
 * every step) and {@link io.gradsync.tasks.kernels.JvmKernels}.
 */
package io.gradsync.tasks.kernels;
