/**
 * The front end: a static Java method's bytecode to {@link io.gradsync.tasks.compiler.ir.KernelIr},
 * every call inlined. {@link io.gradsync.tasks.compiler.frontend.BytecodeTranslator} maps the
 * kernel's parameters and picks its style; {@code ControlFlow} finds the {@code @Parallel} loop,
 * checks its shape and turns the bytecode into blocks and edges (switches too); {@code
 * StackTranslation} simulates the operand stack one instruction at a time; {@code Inlining}
 * loads, parses and inlines called methods; {@code Intrinsics} maps {@code Math}, {@code Float},
 * the half-float conversions and {@code Atomics} to IR instructions; {@code ApiCalls} handles the
 * {@code KernelContext} and array API, in-kernel arrays and static fields. They share one
 * {@code Translation} per kernel.
 */
package io.gradsync.tasks.compiler.frontend;
