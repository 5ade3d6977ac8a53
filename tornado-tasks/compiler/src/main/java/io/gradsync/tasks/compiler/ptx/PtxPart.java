package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.Locale;

/**
 * A part of the PTX emitter: writes into the kernel's shared {@link PtxWriter}, with the
 * operand and type spellings every part uses.
 */
abstract sealed class PtxPart permits KernelEntry, ScalarEmitter, VectorForm, Addresses, FloatSemantics {
    final PtxWriter w;

    PtxPart(PtxWriter w) {
        this.w = w;
    }

    final String fresh(RegClass c) {
        return w.fresh(c);
    }

    final String fresh(IrType t) {
        return w.fresh(t);
    }

    final String reg(Var v) {
        return w.reg(v);
    }

    final void line(String s) {
        w.line(s);
    }

    /** The operand as a register, moving a constant into a fresh one first. */
    final String src(Operand o) {
        if (o instanceof Var v) {
            return reg(v);
        }
        Const c = (Const) o;
        String r = fresh(c.type());
        line("mov." + suffix(c.type(), true) + " " + r + ", " + immediate(c));
        return r;
    }

    static String suffix(IrType t, boolean signed) {
        return switch (t) {
            case I32 -> signed ? "s32" : "b32";
            case I64 -> signed ? "s64" : "b64";
            case F32 -> "f32";
            case F64 -> "f64";
        };
    }

    static String immediate(Const c) {
        return switch (c.type()) {
            case I32 -> Integer.toString(c.intValue());
            case I64 -> Long.toString(c.bits());
            case F32 -> String.format(Locale.ROOT, "0f%08X", (int) c.bits());
            case F64 -> String.format(Locale.ROOT, "0d%016X", c.bits());
        };
    }

    /** A value's type in {@code ld} and {@code st}. */
    static String memType(IrType t) {
        return switch (t) {
            case I32 -> "u32";
            case I64 -> "u64";
            case F32 -> "f32";
            case F64 -> "f64";
        };
    }

    static String blockLabel(Block b) {
        return "$B" + b.id();
    }
}
