/**
 * What kernel authors use: off-heap arrays ({@link io.gradsync.tasks.api.FloatArray},
 * {@link io.gradsync.tasks.api.IntArray}, {@link io.gradsync.tasks.api.LongArray},
 * {@link io.gradsync.tasks.api.HalfArray}, {@link io.gradsync.tasks.api.Bfloat16Array}), the two
 * kernel styles ({@link io.gradsync.tasks.api.KernelContext} and the
 * {@link io.gradsync.tasks.api.Parallel @Parallel} loop), 16-bit float conversions
 * ({@link io.gradsync.tasks.api.HalfFloats}), atomics with scopes and orders
 * ({@link io.gradsync.tasks.api.Atomics}), launch grids ({@link io.gradsync.tasks.api.WorkerGrid}) and
 * method-reference types for naming kernels ({@link io.gradsync.tasks.api.KernelFunctions}).
 *
 * <p>A kernel is a {@code public static void} method over these types and primitives. The same
 * method runs on the JVM as written and is compiled to PTX and OpenCL C by
 * {@code io.gradsync.tasks.compiler}; whatever that compiler cannot translate faithfully it rejects.
 */
package io.gradsync.tasks.api;
