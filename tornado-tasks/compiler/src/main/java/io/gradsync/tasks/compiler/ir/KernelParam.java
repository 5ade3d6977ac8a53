package io.gradsync.tasks.compiler.ir;

/**
 * One Java parameter of a kernel and what it becomes on the device.
 *
 * <p>Calling convention: in PTX an array parameter becomes two device arguments, a global pointer
 * ({@code <name>_ptr}, 64-bit) followed by its element count ({@code <name>_len}, 32-bit int) so
 * that {@code getSize()} works in the kernel; in OpenCL C three, the buffer, the element offset
 * of the array in it and the count (OpenCL has no pointer arguments, and slices must not need
 * sub-buffers). A scalar becomes one argument passed by value; a {@code KernelContext} parameter
 * is implicit and passes nothing.
 */
public sealed interface KernelParam {
    /** The Java parameter name (or {@code p<index>} when the class file does not record it). */
    String name();

    /** The position among the Java method's parameters. */
    int javaIndex();

    record ArrayParam(String name, int javaIndex, ElementKind element) implements KernelParam {
    }

    /** @param var the IR variable that holds the value inside the kernel */
    record ScalarParam(String name, int javaIndex, IrType type, Var var) implements KernelParam {
    }

    record ContextParam(String name, int javaIndex) implements KernelParam {
    }
}
