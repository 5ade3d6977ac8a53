/**
 * The kernel compiler, in stages each in its own package: the front end ({@code .frontend}) reads
 * Java bytecode (with {@code java.lang.classfile}) into a typed IR of basic blocks ({@code .ir});
 * the lowering ({@code .lower}) writes Java's semantics into it where a target's instruction
 * differs; the optimization stage ({@code .optimize}) folds constants and roundings and finds element-wise loops;
 * the emitters translate the result to PTX ({@code .ptx}, scalar and vector forms) and OpenCL C
 * ({@code .opencl}). {@code .access} lets gradsync's launchers read a compiled kernel's IR.
 *
 * <p>Entry points: {@link io.gradsync.tasks.compiler.KernelCompiler#compile(java.lang.reflect.Method)}
 * (cached) gives a {@link io.gradsync.tasks.compiler.CompiledKernel}, whose {@code ptx(sm)} and
 * {@code openCl()} are generated on demand and cached.
 *
 * <p>Supported: every primitive operation with Java's results (casts saturate, {@code MIN / -1}
 * wraps, {@code %} on floats is exact), compares, if/else, loops, {@code switch}, locals, constants
 * and {@code static final} fields and primitive arrays (as tables), fixed-size private arrays,
 * calls to static methods (inlined, the JDK's own included: every {@code Math} and
 * {@code StrictMath} function beyond {@code min/max/abs/sqrt/fma} is StrictMath's Java code),
 * fp16 and bf16 conversions, array get/set/getSize, the {@code KernelContext} queries in three
 * dimensions with group-local arrays, barriers and warp reductions, and {@code Atomics}. Everything
 * else (objects, virtual calls outside the array API, exceptions, monitors, instance fields,
 * strings, recursion, lambdas) fails with {@link io.gradsync.tasks.compiler.KernelCompileException}
 * naming class, method, bytecode offset and construct.
 *
 * <p>Calling convention: see {@link io.gradsync.tasks.compiler.ir.KernelParam}. Launch styles: see
 * {@link io.gradsync.tasks.compiler.KernelStyle}. Not modelled on a device: Java's exceptions (an
 * integer division by zero gives 0 there; an index out of range is undefined, as in CUDA and C).
 * Print generated code with {@code -Dgradsync.printKernels=true}.
 */
package io.gradsync.tasks.compiler;
