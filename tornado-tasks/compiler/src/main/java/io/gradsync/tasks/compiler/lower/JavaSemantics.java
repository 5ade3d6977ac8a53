package io.gradsync.tasks.compiler.lower;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.Insn.Cond;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes Java's integer semantics into the IR, once for every target, where a target's own
 * instruction differs from Java's. After this pass the emitters translate each instruction as the
 * target's plain one:
 * <ul>
 *   <li>{@code Math.abs} of an int or long: {@code x} times its sign in wrapping arithmetic, so
 *       that {@code abs(MIN)} is {@code MIN}, as in Java. A target's own abs may
 *       be assumed non-negative by its optimizer (PTX, OpenCL C's {@code abs}), which turns
 *       {@code abs(MIN) % n} and {@code abs(MIN) / n} into unsigned arithmetic.</li>
 *   <li>integer {@code /} and {@code %}: by {@code -1} Java wraps ({@code MIN / -1 == MIN},
 *       {@code x % -1 == 0}) where C and PTX leave it undefined; by {@code 0} Java throws, which a
 *       device cannot, so the result is 0 there (a CPU device would trap and take the process
 *       down). The target's division only ever sees other divisors.</li>
 *   <li>shift counts: Java takes the low 5 (int) or 6 (long) bits; PTX clamps larger counts and
 *       C leaves them undefined, so the count is masked here.</li>
 * </ul>
 * Float semantics (NaN-propagating {@code Math.min}/{@code max}, NaN and out-of-range casts) stay
 * with the emitters for now, each as the target's own instruction sequence; {@code %} on floats is
 * Java code the front end inlines ({@code JavaRemainder}).
 */
public final class JavaSemantics {
    private final List<Var> vars;

    private JavaSemantics(List<Var> vars) {
        this.vars = new ArrayList<>(vars);
    }

    /** The kernel with Java's semantics written out; {@code ir}'s blocks are rewritten in place. */
    public static KernelIr lower(KernelIr ir) {
        JavaSemantics pass = new JavaSemantics(ir.vars());
        for (Block b : ir.blocks()) {
            List<Insn> out = new ArrayList<>(b.insns().size());
            for (Insn insn : b.insns()) {
                pass.lower(insn, out);
            }
            b.insns().clear();
            b.insns().addAll(out);
        }
        return new KernelIr(ir.name(), ir.source(), ir.params(), ir.blocks(), List.copyOf(pass.vars), ir.writtenArrays(), ir.arrays());
    }

    private void lower(Insn insn, List<Insn> out) {
        switch (insn) {
            case Insn.Unary u when u.op() == Insn.UnOp.ABS && !u.a().type().isFloat() -> abs(u, out);
            case Insn.Binary b when !b.dst().type().isFloat() && (b.op() == BinOp.DIV || b.op() == BinOp.REM) -> divide(b, out);
            case Insn.Binary b when b.op() == BinOp.SHL || b.op() == BinOp.SHR || b.op() == BinOp.USHR -> shift(b, out);
            default -> out.add(insn);
        }
    }

    /**
     * {@code dst = x * ((x >> (bits - 1)) | 1)}: x times its sign, in wrapping arithmetic, so |x|
     * and MIN for MIN. Not the {@code (x ^ m) - m} idiom: NVIDIA's OpenCL compiler takes that for
     * its abs and then for non-negative ({@code abs(MIN) % 3} came out 2, not -2).
     */
    private void abs(Insn.Unary u, List<Insn> out) {
        IrType t = u.a().type();
        Var sign = fresh(t, "abs_sign");
        Var factor = fresh(t, "abs_factor");
        out.add(new Insn.Binary(BinOp.SHR, sign, u.a(), Const.ofInt(t.isWide() ? 63 : 31)));
        out.add(new Insn.Binary(BinOp.OR, factor, sign, t.isWide() ? Const.ofLong(1) : Const.ofInt(1)));
        out.add(new Insn.Binary(BinOp.MUL, u.dst(), u.a(), factor));
    }

    private void divide(Insn.Binary b, List<Insn> out) {
        IrType t = b.dst().type();
        boolean div = b.op() == BinOp.DIV;
        Operand zero = zero(t);
        if (b.b() instanceof Const c) {
            if (c.bits() == 0) {
                out.add(new Insn.Move(b.dst(), zero));
            } else if (c.bits() == -1) {
                out.add(div ? new Insn.Binary(BinOp.SUB, b.dst(), zero, b.a()) : new Insn.Move(b.dst(), zero));
            } else {
                out.add(b);
            }
            return;
        }
        Operand minusOne = t.isWide() ? Const.ofLong(-1) : Const.ofInt(-1);
        Operand one = t.isWide() ? Const.ofLong(1) : Const.ofInt(1);
        Var notMinusOne = fresh(t, "divisor");
        Var safe = fresh(t, "divisor");
        Var plain = fresh(t, div ? "quotient" : "remainder");
        Var byMinusOne = fresh(t, div ? "quotient" : "remainder");
        out.add(new Insn.Select(notMinusOne, Cond.EQ, b.b(), minusOne, one, b.b()));
        out.add(new Insn.Select(safe, Cond.EQ, b.b(), zero, one, notMinusOne));
        out.add(new Insn.Binary(b.op(), plain, b.a(), safe));
        if (div) {
            Var negated = fresh(t, "negated");
            out.add(new Insn.Binary(BinOp.SUB, negated, zero, b.a()));
            out.add(new Insn.Select(byMinusOne, Cond.EQ, b.b(), minusOne, negated, plain));
        } else {
            out.add(new Insn.Select(byMinusOne, Cond.EQ, b.b(), minusOne, zero, plain));
        }
        out.add(new Insn.Select(b.dst(), Cond.EQ, b.b(), zero, zero, byMinusOne));
    }

    /** Java's count is the low 5 bits (int) or 6 bits (long) of the int operand. */
    private void shift(Insn.Binary b, List<Insn> out) {
        int mask = b.dst().type().isWide() ? 63 : 31;
        if (b.b() instanceof Const c) {
            out.add(new Insn.Binary(b.op(), b.dst(), b.a(), Const.ofInt(c.intValue() & mask)));
            return;
        }
        Var count = fresh(IrType.I32, "shift");
        out.add(new Insn.Binary(BinOp.AND, count, b.b(), Const.ofInt(mask)));
        out.add(new Insn.Binary(b.op(), b.dst(), b.a(), count));
    }

    private static Operand zero(IrType t) {
        return t.isWide() ? Const.ofLong(0) : Const.ofInt(0);
    }

    private Var fresh(IrType type, String hint) {
        Var v = new Var(vars.size(), type, hint);
        vars.add(v);
        return v;
    }
}
