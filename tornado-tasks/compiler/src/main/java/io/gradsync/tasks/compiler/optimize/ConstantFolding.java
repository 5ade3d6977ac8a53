package io.gradsync.tasks.compiler.optimize;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;
import java.util.HashMap;
import java.util.ListIterator;
import java.util.Map;

/**
 * Replaces every instruction whose operands are all constants by a move of its result, computed
 * here in Java, so that Java's result is what the device gets: constant arguments of inlined calls
 * and the lowering's own constants leave such instructions behind, and a target would otherwise
 * have to accept immediates where its instruction takes registers. Runs after the lowering, so no
 * integer division by 0 or -1 and no float min or max is left to fold.
 */
public final class ConstantFolding {
    private ConstantFolding() {
    }

    /**
     * Folds {@code ir}'s blocks in place and returns it. A variable defined once, by a constant,
     * is that constant in the arithmetic that reads it (Java's definite assignment puts its
     * definition before every use), so folds chain until none is left.
     */
    public static KernelIr fold(KernelIr ir) {
        Map<Var, Integer> definitions = new HashMap<>();
        for (KernelParam p : ir.params()) {
            if (p instanceof KernelParam.ScalarParam scalar) {
                definitions.put(scalar.var(), 1); // defined on entry: an assignment in the kernel is a second one
            }
        }
        for (Block b : ir.blocks()) {
            for (Insn insn : b.insns()) {
                Var d = ElementwiseLoop.def(insn);
                if (d != null) {
                    definitions.merge(d, 1, Integer::sum);
                }
            }
        }
        Map<Var, Const> known = new HashMap<>();
        boolean changed = true;
        while (changed) {
            changed = false;
            for (Block b : ir.blocks()) {
                ListIterator<Insn> it = b.insns().listIterator();
                while (it.hasNext()) {
                    Insn insn = substitute(it.next(), known);
                    Const value = value(insn);
                    Insn result = value != null ? new Insn.Move(destination(insn), value) : insn;
                    if (result instanceof Insn.Move m && m.src() instanceof Const c && definitions.get(m.dst()) == 1
                            && known.put(m.dst(), c) == null) {
                        changed = true;
                    }
                    it.set(result);
                }
            }
        }
        return ir;
    }

    /** {@code insn} with the known constants in place of the variables it reads, where it is arithmetic. */
    private static Insn substitute(Insn insn, Map<Var, Const> known) {
        if (known.isEmpty()) {
            return insn;
        }
        return switch (insn) {
            case Insn.Binary b -> new Insn.Binary(b.op(), b.dst(), known(b.a(), known), known(b.b(), known));
            case Insn.Select s -> new Insn.Select(s.dst(), s.cond(), known(s.a(), known), known(s.b(), known),
                    known(s.ifTrue(), known), known(s.ifFalse(), known));
            case Insn.Convert c -> new Insn.Convert(c.op(), c.dst(), known(c.src(), known));
            case Insn.Unary u -> new Insn.Unary(u.op(), u.dst(), known(u.a(), known));
            case Insn.Move m -> new Insn.Move(m.dst(), known(m.src(), known));
            default -> insn;
        };
    }

    private static Operand known(Operand o, Map<Var, Const> known) {
        return o instanceof Var v && known.containsKey(v) ? known.get(v) : o;
    }

    private static Var destination(Insn insn) {
        return switch (insn) {
            case Insn.Binary b -> b.dst();
            case Insn.Select s -> s.dst();
            case Insn.Convert c -> c.dst();
            case Insn.Unary u -> u.dst();
            default -> throw new IllegalStateException(insn.toString());
        };
    }

    /** The constant result of {@code insn}, or null where it has a variable operand or is not folded. */
    private static Const value(Insn insn) {
        return switch (insn) {
            case Insn.Binary b when b.a() instanceof Const x && b.b() instanceof Const y -> binary(b.op(), b.dst().type(), x, y);
            case Insn.Select s when s.a() instanceof Const x && s.b() instanceof Const y
                    && s.ifTrue() instanceof Const t && s.ifFalse() instanceof Const f -> holds(s.cond(), x, y) ? t : f;
            case Insn.Unary u when u.a() instanceof Const x && u.op() == Insn.UnOp.NEG -> negate(x);
            case Insn.Convert c when c.src() instanceof Const x -> convert(c.op(), x);
            default -> null;
        };
    }

    private static Const binary(BinOp op, IrType t, Const x, Const y) {
        return switch (t) {
            case I32 -> intOp(op, x.intValue(), y.intValue());
            case I64 -> op == BinOp.SHL || op == BinOp.SHR || op == BinOp.USHR
                    ? longOp(op, x.bits(), y.intValue()) : longOp(op, x.bits(), y.bits());
            case F32 -> switch (op) {
                case ADD -> Const.ofFloat(x.floatValue() + y.floatValue());
                case SUB -> Const.ofFloat(x.floatValue() - y.floatValue());
                case MUL -> Const.ofFloat(x.floatValue() * y.floatValue());
                case DIV -> Const.ofFloat(x.floatValue() / y.floatValue());
                default -> null;
            };
            case F64 -> switch (op) {
                case ADD -> Const.ofDouble(x.doubleValue() + y.doubleValue());
                case SUB -> Const.ofDouble(x.doubleValue() - y.doubleValue());
                case MUL -> Const.ofDouble(x.doubleValue() * y.doubleValue());
                case DIV -> Const.ofDouble(x.doubleValue() / y.doubleValue());
                default -> null;
            };
        };
    }

    private static Const intOp(BinOp op, int a, int b) {
        return switch (op) {
            case ADD -> Const.ofInt(a + b);
            case SUB -> Const.ofInt(a - b);
            case MUL -> Const.ofInt(a * b);
            case DIV -> b == 0 ? null : Const.ofInt(a / b);
            case REM -> b == 0 ? null : Const.ofInt(a % b);
            case AND -> Const.ofInt(a & b);
            case OR -> Const.ofInt(a | b);
            case XOR -> Const.ofInt(a ^ b);
            case SHL -> Const.ofInt(a << b);
            case SHR -> Const.ofInt(a >> b);
            case USHR -> Const.ofInt(a >>> b);
            case MIN -> Const.ofInt(Math.min(a, b));
            case MAX -> Const.ofInt(Math.max(a, b));
        };
    }

    private static Const longOp(BinOp op, long a, long b) {
        return switch (op) {
            case ADD -> Const.ofLong(a + b);
            case SUB -> Const.ofLong(a - b);
            case MUL -> Const.ofLong(a * b);
            case DIV -> b == 0 ? null : Const.ofLong(a / b);
            case REM -> b == 0 ? null : Const.ofLong(a % b);
            case AND -> Const.ofLong(a & b);
            case OR -> Const.ofLong(a | b);
            case XOR -> Const.ofLong(a ^ b);
            case SHL -> Const.ofLong(a << b);
            case SHR -> Const.ofLong(a >> b);
            case USHR -> Const.ofLong(a >>> b);
            case MIN -> Const.ofLong(Math.min(a, b));
            case MAX -> Const.ofLong(Math.max(a, b));
        };
    }

    /** Integers signed, floats ordered (false where either is NaN), as {@link Insn.Select} defines it. */
    private static boolean holds(Insn.Cond cond, Const x, Const y) {
        if (x.type().isFloat()) {
            double a = x.type().isWide() ? x.doubleValue() : x.floatValue();
            double b = y.type().isWide() ? y.doubleValue() : y.floatValue();
            if (Double.isNaN(a) || Double.isNaN(b)) {
                return false;
            }
            return cond.test(Double.compare(a == 0 ? 0 : a, b == 0 ? 0 : b)); // -0.0 == 0.0 in a compare
        }
        long a = x.type().isWide() ? x.bits() : x.intValue();
        long b = y.type().isWide() ? y.bits() : y.intValue();
        return cond.test(Long.compare(a, b));
    }

    private static Const negate(Const x) {
        return switch (x.type()) {
            case I32 -> Const.ofInt(-x.intValue());
            case I64 -> Const.ofLong(-x.bits());
            case F32 -> Const.ofFloat(-x.floatValue());
            case F64 -> Const.ofDouble(-x.doubleValue());
        };
    }

    private static Const convert(Insn.ConvOp op, Const x) {
        return switch (op) {
            case I2L -> Const.ofLong(x.intValue());
            case I2F -> Const.ofFloat(x.intValue());
            case I2D -> Const.ofDouble(x.intValue());
            case L2I -> Const.ofInt((int) x.bits());
            case L2F -> Const.ofFloat(x.bits());
            case L2D -> Const.ofDouble(x.bits());
            case F2I -> Const.ofInt((int) x.floatValue());
            case F2L -> Const.ofLong((long) x.floatValue());
            case F2D -> Const.ofDouble(x.floatValue());
            case D2I -> Const.ofInt((int) x.doubleValue());
            case D2L -> Const.ofLong((long) x.doubleValue());
            case D2F -> Const.ofFloat((float) x.doubleValue());
            case I2B -> Const.ofInt((byte) x.intValue());
            case I2S -> Const.ofInt((short) x.intValue());
            case I2C -> Const.ofInt((char) x.intValue());
        };
    }
}
