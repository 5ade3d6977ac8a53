package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.ir.IrBuilder;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The state of one kernel's translation, shared by the front end's stages: the IR being built,
 * the stack of methods being translated (the kernel at the bottom, inlined callees above it) and
 * the kernel's style. The stages reach each other through it, since they call each other in
 * cycles (an instruction may inline a method, which translates instructions again).
 */
final class Translation {
    final IrBuilder ir = new IrBuilder();
    final Deque<Frame> frames = new ArrayDeque<>();
    /** Set once the kernel's parameters and @Parallel loop are known, before its body is translated. */
    KernelStyle style;

    final ControlFlow controlFlow;
    final StackTranslation stack;
    final Inlining inlining;
    final Intrinsics intrinsics;
    final ApiCalls api;

    Translation() {
        controlFlow = new ControlFlow(this);
        stack = new StackTranslation(this);
        inlining = new Inlining(this);
        intrinsics = new Intrinsics(this);
        api = new ApiCalls(this);
    }

    /** The kernel's own frame (the bottom of the stack), or null before it is pushed. */
    Frame kernelFrame() {
        return frames.peekLast();
    }
}
