package io.gradsync.tasks.compiler.ir;

/** A value an instruction reads: a variable or a constant. */
public sealed interface Operand permits Var, Const {
    IrType type();
}
