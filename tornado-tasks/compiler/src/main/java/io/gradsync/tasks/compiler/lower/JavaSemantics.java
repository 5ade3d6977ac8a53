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
 *   <li>{@code Math.min} and {@code max} of floats: NaN if either operand is NaN (a target's
 *       minimum returns the other operand), and -0.0 below 0.0 (C's {@code fmin} may return
 *       either zero), written as selects; no float min or max reaches a target.</li>
 *   <li>float and double to int and long: NaN gives 0 and out-of-range values saturate, where a
 *       C cast is undefined and PTX's {@code cvt} turned NaN into MIN for 64-bit results on sm_90.
 *       The target's truncation then decides only in-range values.</li>
 * </ul>
 * Float {@code %} is written once too, as Java code the front end inlines
 * ({@code JavaRemainder}). What stays with the emitters is what the IR has no instruction for:
 * the cross-lane maximum of a warp and the compare-and-swap loop of an atomic float maximum, each
 * built around the target's sequence for Java's max.
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
            case Insn.Binary b when b.dst().type().isFloat() && (b.op() == BinOp.MIN || b.op() == BinOp.MAX) -> minMax(b, out);
            case Insn.Convert c when c.src().type().isFloat() && !c.dst().type().isFloat() -> floatToInteger(c, out);
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

    /**
     * Java's min or max of two floats as selects on ordered compares, which every target has
     * exactly: {@code a} where {@code a} is NaN (Java returns that operand), the bitwise or (min)
     * or and (max) of two equal values, so that -0.0 sorts below 0.0, else the smaller or larger
     * of the two, which is {@code b} where {@code b} is NaN. No target min or max is left: PTX's
     * and C's return the other operand for a NaN, and C's may return either zero.
     */
    private void minMax(Insn.Binary insn, List<Insn> out) {
        // the constant second: a select cannot compare two immediates, and min and max commute
        // (but for which NaN they return, and a constant NaN is folded here)
        Insn.Binary b = insn.a() instanceof Const && !(insn.b() instanceof Const)
                ? new Insn.Binary(insn.op(), insn.dst(), insn.b(), insn.a()) : insn;
        if (b.b() instanceof Const k) {
            if (b.a() instanceof Const j) {
                out.add(new Insn.Move(b.dst(), javaMinMax(b.op(), j, k)));
                return;
            }
            if (k.type().isWide() ? Double.isNaN(k.doubleValue()) : Float.isNaN(k.floatValue())) {
                out.add(new Insn.Move(b.dst(), k));
                return;
            }
        }
        IrType t = b.dst().type();
        IrType bitsType = t.isWide() ? IrType.I64 : IrType.I32;
        boolean min = b.op() == BinOp.MIN;
        Var chosen = fresh(t, "minmax");
        Var aBits = fresh(bitsType, "minmax_bits");
        Var bBits = fresh(bitsType, "minmax_bits");
        Var zeroBits = fresh(bitsType, "minmax_bits");
        Var equal = fresh(t, "minmax_equal");
        Var ordered = fresh(t, "minmax");
        out.add(new Insn.Select(chosen, min ? Cond.LT : Cond.GT, b.a(), b.b(), b.a(), b.b()));
        out.add(new Insn.Unary(Insn.UnOp.BITCAST, aBits, b.a()));
        out.add(new Insn.Unary(Insn.UnOp.BITCAST, bBits, b.b()));
        out.add(new Insn.Binary(min ? BinOp.OR : BinOp.AND, zeroBits, aBits, bBits));
        out.add(new Insn.Unary(Insn.UnOp.BITCAST, equal, zeroBits));
        out.add(new Insn.Select(ordered, Cond.EQ, b.a(), b.b(), equal, chosen));
        out.add(new Insn.Select(b.dst(), Cond.EQ, b.a(), b.a(), ordered, b.a()));
    }

    private static Const javaMinMax(BinOp op, Const a, Const b) {
        if (a.type().isWide()) {
            double x = a.doubleValue();
            double y = b.doubleValue();
            return Const.ofDouble(op == BinOp.MIN ? Math.min(x, y) : Math.max(x, y));
        }
        float x = a.floatValue();
        float y = b.floatValue();
        return Const.ofFloat(op == BinOp.MIN ? Math.min(x, y) : Math.max(x, y));
    }

    /**
     * Java's float-to-integer conversion: the target's truncation where the value is a number in
     * range, the type's MAX_VALUE at or above 2^(bits-1), MIN_VALUE at or below -2^(bits-1), and 0
     * for NaN.
     */
    private void floatToInteger(Insn.Convert c, List<Insn> out) {
        IrType from = c.src().type();
        IrType to = c.dst().type();
        if (c.src() instanceof Const k) {
            double v = from.isWide() ? k.doubleValue() : k.floatValue();
            out.add(new Insn.Move(c.dst(), to.isWide() ? Const.ofLong((long) v) : Const.ofInt((int) v)));
            return;
        }
        boolean wide = to.isWide();
        double limit = wide ? 0x1p63 : 0x1p31;
        Operand high = from.isWide() ? Const.ofDouble(limit) : Const.ofFloat((float) limit);
        Operand low = from.isWide() ? Const.ofDouble(-limit) : Const.ofFloat((float) -limit);
        Operand max = wide ? Const.ofLong(Long.MAX_VALUE) : Const.ofInt(Integer.MAX_VALUE);
        Operand min = wide ? Const.ofLong(Long.MIN_VALUE) : Const.ofInt(Integer.MIN_VALUE);
        Var truncated = fresh(to, "cast");
        Var belowHigh = fresh(to, "cast");
        Var inRange = fresh(to, "cast");
        out.add(new Insn.Convert(c.op(), truncated, c.src()));
        out.add(new Insn.Select(belowHigh, Cond.GE, c.src(), high, max, truncated));
        out.add(new Insn.Select(inRange, Cond.LE, c.src(), low, min, belowHigh));
        out.add(new Insn.Select(c.dst(), Cond.EQ, c.src(), c.src(), inRange, zero(to)));
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
