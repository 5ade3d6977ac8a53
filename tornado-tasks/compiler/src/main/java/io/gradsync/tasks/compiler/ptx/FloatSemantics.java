package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.IrType;

/**
 * The PTX sequences for floating-point work the IR has no single instruction for: Java's max and
 * min inside a warp reduction and an atomic's compare-and-swap loop (elsewhere the lowering writes
 * them out), rounding a double to odd, and rounding to bf16 (with integer code before sm_80) and
 * fp16 for 16-bit stores, from a float or, once, from a double.
 */
final class FloatSemantics extends PtxPart {
    private final int sm;

    FloatSemantics(PtxWriter w, int sm) {
        super(w);
        this.sm = sm;
    }

    /** Java's Math.min / max of two float registers: NaN if either is NaN (PTX's would return the other operand). */
    String javaMinMax(BinOp op, IrType t, String a, String c) {
        String s = suffix(t, true);
        String m = fresh(t);
        String sum = fresh(t);
        String nan = fresh(RegClass.PRED);
        String d = fresh(t);
        line((op == BinOp.MIN ? "min." : "max.") + s + " " + m + ", " + a + ", " + c);
        line("add.rn." + s + " " + sum + ", " + a + ", " + c);
        line("setp.nan." + s + " " + nan + ", " + a + ", " + c);
        line("selp." + s + " " + d + ", " + sum + ", " + m + ", " + nan);
        return d;
    }

    /** Rounds an f32 register to bf16 (nearest even), returning a .b16 register. */
    String bf16Round(String f) {
        String h = fresh(RegClass.B16);
        if (sm >= 80) {
            line("cvt.rn.bf16.f32 " + h + ", " + f);
            return h;
        }
        String bits = fresh(RegClass.B32);
        String lsb = fresh(RegClass.B32);
        String sum = fresh(RegClass.B32);
        String hi = fresh(RegClass.B32);
        String quiet = fresh(RegClass.B32);
        String res = fresh(RegClass.B32);
        String nan = fresh(RegClass.PRED);
        line("mov.b32 " + bits + ", " + f);
        line("bfe.u32 " + lsb + ", " + bits + ", 16, 1");
        line("add.s32 " + sum + ", " + bits + ", " + lsb);
        line("add.s32 " + sum + ", " + sum + ", 32767");
        line("shr.u32 " + hi + ", " + sum + ", 16");
        line("shr.u32 " + quiet + ", " + bits + ", 16");
        line("or.b32 " + quiet + ", " + quiet + ", 64");
        line("setp.nan.f32 " + nan + ", " + f + ", " + f);
        line("selp.b32 " + res + ", " + quiet + ", " + hi + ", " + nan);
        line("cvt.u16.u32 " + h + ", " + res);
        return h;
    }

    /**
     * A double register rounded to odd as a float register: toward zero, then the last bit set
     * where that changed the value (NaN compares unequal and stays NaN).
     */
    String roundToOdd(String d, String dst) {
        String f = fresh(RegClass.F32);
        String back = fresh(RegClass.F64);
        String inexact = fresh(RegClass.PRED);
        String bits = fresh(RegClass.B32);
        line("cvt.rz.f32.f64 " + f + ", " + d);
        line("cvt.f64.f32 " + back + ", " + f);
        line("setp.neu.f64 " + inexact + ", " + back + ", " + d);
        line("mov.b32 " + bits + ", " + f);
        line("@" + inexact + " or.b32 " + bits + ", " + bits + ", 1");
        line("mov.b32 " + dst + ", " + bits);
        return dst;
    }

    /**
     * The 16 bits a store to a half-kind array writes, as a .b16 register: rounded from a float,
     * rounded once from a double (one instruction from sm_90, through a float rounded to odd
     * before), or the raw low bits.
     */
    String sixteenBits(Insn.Store s, String v) {
        if (!s.rawBits() && s.value().type() == IrType.F64) {
            String kind = s.array().element() == ElementKind.F16 ? "f16" : "bf16";
            if (sm >= 90) {
                String h = fresh(RegClass.B16);
                line("cvt.rn." + kind + ".f64 " + h + ", " + v);
                return h;
            }
            v = roundToOdd(v, fresh(RegClass.F32));
        }
        if (s.rawBits()) {
            String h = fresh(RegClass.B16);
            line("cvt.u16.u32 " + h + ", " + v);
            return h;
        } else if (s.array().element() == ElementKind.F16) {
            String h = fresh(RegClass.B16);
            line("cvt.rn.f16.f32 " + h + ", " + v);
            return h;
        }
        return bf16Round(v);
    }
}
