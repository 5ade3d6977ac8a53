package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.frontend.StackValue.Cmp;
import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.frontend.StackValue.Val;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.IrBuilder;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.List;

/**
 * A stage of the front end: the shared {@link Translation}, and the operand-stack primitives
 * (pop, push, materializing a pending compare) that every stage uses on the simulated stack.
 */
abstract sealed class Stage permits ControlFlow, StackTranslation, Inlining, Intrinsics, ApiCalls {
    final Translation t;
    final IrBuilder ir;

    Stage(Translation t) {
        this.t = t;
        this.ir = t.ir;
    }

    static Operand op(Frame f, StackValue v) {
        if (v instanceof Val val) {
            return val.op();
        }
        throw f.error("a reference (array or KernelContext) used as a number");
    }

    final Val materialize(StackValue v) {
        if (v instanceof Cmp c) {
            Var dst = ir.newVar(IrType.I32, "");
            ir.emit(new Insn.Compare3(dst, c.a(), c.b(), c.nanResult()));
            return new Val(dst);
        }
        return (Val) v;
    }

    final Operand pop(Frame f, List<StackValue> stack) {
        StackValue v = stack.removeLast();
        if (v instanceof Cmp) {
            v = materialize(v);
        }
        return op(f, v);
    }

    final Ref popRef(Frame f, List<StackValue> stack) {
        StackValue v = stack.removeLast();
        if (v instanceof Ref r) {
            return r;
        }
        throw f.error("expected an array or KernelContext reference on the stack");
    }

    static void push(List<StackValue> stack, Operand o) {
        stack.add(new Val(o));
    }

    final Var binary(BinOp op, Operand a, Operand b) {
        Var dst = ir.newVar(a.type(), "");
        ir.emit(new Insn.Binary(op, dst, a, b));
        return dst;
    }
}
