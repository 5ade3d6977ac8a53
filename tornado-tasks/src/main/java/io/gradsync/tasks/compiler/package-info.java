/**
 * The kernel compiler: Java bytecode (read with {@code java.lang.classfile}) to a typed IR of basic
 * blocks ({@code .ir}), then to PTX ({@code .ptx}) and OpenCL C ({@code .opencl}).
 *
 * <p>Entry points: {@link io.gradsync.tasks.compiler.KernelCompiler#compile(java.lang.reflect.Method)}
 * (cached) gives a {@link io.gradsync.tasks.compiler.CompiledKernel}, whose {@code ptx(sm)} and
 * {@code openCl()} are generated on demand and cached.
 *
 * <p>Supported: int/long/float/double arithmetic and conversions with Java semantics, compares,
 * if/else, loops, locals, constants and static final fields, calls to static methods (inlined,
 * including java.lang ones such as {@code Float.isNaN}), {@code Math.min/max/abs/sqrt/exp/fma},
 * fp16 and bf16 conversions, array get/set/getSize, atomic adds. Everything else (allocation,
 * virtual calls outside the array API, exceptions, monitors, instance fields, strings, switches,
 * recursion, lambdas) fails with {@link io.gradsync.tasks.compiler.KernelCompileException} naming
 * class, method, bytecode offset and construct.
 *
 * <p>Calling convention: see {@link io.gradsync.tasks.compiler.ir.KernelParam}. Launch styles: see
 * {@link io.gradsync.tasks.compiler.KernelStyle}. Not modelled on a device: Java's exceptions
 * (an integer division by zero or an index out of range is undefined there, as in CUDA and C).
 * Print generated code with {@code -Dgradsync.printKernels=true}.
 */
package io.gradsync.tasks.compiler;
