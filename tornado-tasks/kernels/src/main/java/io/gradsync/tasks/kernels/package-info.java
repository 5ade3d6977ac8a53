/**
 * The built-in kernels, one class per family ({@link io.gradsync.tasks.kernels.AverageKernels},
 * {@link io.gradsync.tasks.kernels.ElementwiseKernels}, {@link io.gradsync.tasks.kernels.ConversionKernels},
 * {@link io.gradsync.tasks.kernels.ReductionKernels}: {@link io.gradsync.tasks.kernels.KernelFamily}), each
 * with its JVM fast form and its CUDA C reference beside it; their registry
 * ({@link io.gradsync.tasks.kernels.BuiltinKernels}) and forms ({@link io.gradsync.tasks.kernels.KernelSpec});
 * generated-source export ({@link io.gradsync.tasks.kernels.KernelSources#emitAll}); task graphs run on
 * devices ({@link io.gradsync.tasks.kernels.ExecutionPlan}, arrays bound to caller-owned memory as
 * {@link io.gradsync.tasks.kernels.DeviceSlice}s); and launching compiled kernels on the runtimes:
 * {@link io.gradsync.tasks.kernels.launch.CudaKernels}, {@link io.gradsync.tasks.kernels.launch.OpenClKernels}
 * (arguments as slices and numbers, prepared once, launched every step) and, on JVM devices,
 * {@code io.gradsync.tasks.kernels.internal.JvmKernels}.
 */
package io.gradsync.tasks.kernels;
