package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.ir.Operand;

/**
 * A value on the simulated operand stack. References are symbolic (a kernel array parameter, an
 * in-kernel array, the KernelContext, an atomics enum constant): they are never device values.
 */
sealed interface StackValue permits StackValue.Val, StackValue.Ref, StackValue.Cmp {

    /** A number: an IR operand. */
    record Val(Operand op) implements StackValue {
    }

    /** A reference: a kernel array parameter, an in-kernel array, an enum constant, or the KernelContext (target == CONTEXT). */
    record Ref(Object target) implements StackValue {
    }

    /** A three-way compare not yet materialized, so that the following if can branch on it directly. */
    record Cmp(Operand a, Operand b, int nanResult) implements StackValue {
    }

    /** The target of a reference to the KernelContext. */
    Object CONTEXT = new Object() {
        @Override
        public String toString() {
            return "KernelContext";
        }
    };
}
