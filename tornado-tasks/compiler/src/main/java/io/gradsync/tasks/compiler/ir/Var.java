package io.gradsync.tasks.compiler.ir;

/**
 * A typed virtual register. Variables are not SSA: a Java local is one variable assigned many
 * times; the backends (ptxas, the OpenCL compiler) do register allocation and SSA themselves.
 *
 * @param id   unique within a kernel
 * @param hint a readable name for printing (the Java local's name when known), may be empty
 */
public record Var(int id, IrType type, String hint) implements Operand {
}
