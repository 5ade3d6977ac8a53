package io.gradsync.tasks.compiler.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.access.KernelIrs;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * After the lowering, no instruction left for an emitter differs from Java on any target: no
 * integer abs, no division that a target leaves undefined, no shift count out of range, no float
 * min or max that could see a NaN or two zeros, no float-to-integer cast whose NaN or
 * out-of-range result is used. (What
 * the kernels compute is checked against Java on every device in the kernels module's tests.)
 */
class JavaSemanticsTest {
    private static final KernelCompiler COMPILER = new KernelCompiler();

    public static void integers(IntArray a, IntArray b, IntArray out, LongArray la, LongArray lb, LongArray lout) {
        for (@Parallel int i = 0; i < a.getSize(); i++) {
            int x = Math.abs(a.get(i));
            out.set(i, x / b.get(i) + x % b.get(i) + (x << b.get(i)) + (x >>> 40) + x / 3 + x % -1 + x / -1);
            long y = Math.abs(la.get(i));
            lout.set(i, y / lb.get(i) + y % lb.get(i) + (y >> b.get(i)) + (y << 70));
        }
    }

    public static void floats(FloatArray f, DoubleArray d, FloatArray fout, DoubleArray dout, IntArray iout, LongArray lout) {
        for (@Parallel int i = 0; i < f.getSize(); i++) {
            float x = f.get(i);
            double y = d.get(i);
            fout.set(i, Math.min(x, fout.get(i)) + Math.max(0.5f, x) + Math.max(1f, 2f) + Math.min(x, Float.NaN));
            dout.set(i, Math.max(y, dout.get(i)) + Math.min(y, -0.0));
            iout.set(i, (int) x + (int) y + toInt(3.9e10f));
            lout.set(i, (long) x + (long) y);
        }
    }

    /** Inlined with its constant argument: the cast of a constant that javac could not fold. */
    private static int toInt(float v) {
        return (int) v;
    }

    private static List<Insn> insns(CompiledKernel k) {
        KernelIr ir = KernelIrs.ir(k);
        return ir.blocks().stream().map(Block::insns).flatMap(List::stream).toList();
    }

    private static long count(List<Insn> insns, Predicate<Insn> which) {
        return insns.stream().filter(which).count();
    }

    @Test
    void integerAbsIsWrittenOut() {
        CompiledKernel k = COMPILER.compile(JavaSemanticsTest.class, "integers");
        List<Insn> insns = insns(k);
        assertEquals(0, count(insns, i -> i instanceof Insn.Unary u && u.op() == Insn.UnOp.ABS), "integer abs left");
        assertFalse(k.ptx(90).contains("abs.s"), "PTX abs on integers");
        assertFalse(k.openCl().contains(" abs("), "OpenCL C abs on integers");
    }

    @Test
    void everyDivisionByAVariableIsGuardedAndByMinusOneOrZeroNeverReachesTheTarget() {
        List<Insn> insns = insns(COMPILER.compile(JavaSemanticsTest.class, "integers"));
        for (Insn insn : insns) {
            if (insn instanceof Insn.Binary b && !b.dst().type().isFloat() && (b.op() == Insn.BinOp.DIV || b.op() == Insn.BinOp.REM)) {
                if (b.b() instanceof Const c) {
                    assertTrue(c.bits() != 0 && c.bits() != -1, "division by " + c.bits() + " left for the target: " + b);
                } else {
                    // its divisor comes from the select that replaces 0 (and, before it, -1) with 1
                    assertTrue(insns.stream().anyMatch(i -> i instanceof Insn.Select s && s.dst().equals(b.b())
                            && s.cond() == Insn.Cond.EQ && s.b() instanceof Const z && z.bits() == 0), "unguarded: " + b);
                }
            }
        }
        assertEquals(4, count(insns, i -> i instanceof Insn.Binary b && b.b() instanceof io.gradsync.tasks.compiler.ir.Var
                && (b.op() == Insn.BinOp.DIV || b.op() == Insn.BinOp.REM)), "two int and two long divisions by variables");
    }

    @Test
    void floatMinAndMaxAreWrittenOutAsSelects() {
        CompiledKernel k = COMPILER.compile(JavaSemanticsTest.class, "floats");
        List<Insn> insns = insns(k);
        assertEquals(0, count(insns, i -> i instanceof Insn.Binary b && b.dst().type().isFloat()
                && (b.op() == Insn.BinOp.MIN || b.op() == Insn.BinOp.MAX)), "float min or max left for a target");
        // one NaN test (x == x) per min or max of a variable: two float, two double; the constant ones are folded
        assertEquals(4, count(insns, i -> i instanceof Insn.Select s && s.a().type().isFloat() && s.cond() == Insn.Cond.EQ
                && s.a().equals(s.b()) && s.ifFalse().equals(s.a())), "NaN tests returning the NaN operand");
        for (String op : List.of("min.f32", "max.f32", "min.f64", "max.f64")) {
            assertFalse(k.ptx(90).contains(op), "PTX " + op);
        }
        assertFalse(k.openCl().contains("fmin(") || k.openCl().contains("fmax("), "OpenCL C fmin or fmax");
    }

    @Test
    void floatToIntegerCastsSelectNanAndOutOfRangeAway() {
        List<Insn> insns = insns(COMPILER.compile(JavaSemanticsTest.class, "floats"));
        List<Insn.Convert> casts = insns.stream().filter(i -> i instanceof Insn.Convert c && c.src().type().isFloat()
                && !c.dst().type().isFloat()).map(Insn.Convert.class::cast).toList();
        assertEquals(4, casts.size(), "f2i, d2i, f2l, d2l of variables (the constant one is folded)");
        for (Insn.Convert c : casts) {
            assertTrue(insns.stream().anyMatch(i -> i instanceof Insn.Select s && s.cond() == Insn.Cond.GE && s.a().equals(c.src())
                    && s.ifFalse().equals(c.dst())), "no upper bound: " + c);
            assertTrue(insns.stream().anyMatch(i -> i instanceof Insn.Select s && s.cond() == Insn.Cond.EQ && s.a().equals(c.src())
                    && s.b().equals(c.src())), "no NaN test: " + c);
        }
        assertTrue(io.gradsync.tasks.compiler.optimize.ConstantFoldingTest.constantsRead(insns).anyMatch(k -> k.type() == IrType.I32
                && k.intValue() == Integer.MAX_VALUE), "(int) of a constant 3.9e10f folded to MAX_VALUE");
    }

    @Test
    void shiftCountsAreMaskedAsJavaMasksThem() {
        for (Insn insn : insns(COMPILER.compile(JavaSemanticsTest.class, "integers"))) {
            if (insn instanceof Insn.Binary b && (b.op() == Insn.BinOp.SHL || b.op() == Insn.BinOp.SHR || b.op() == Insn.BinOp.USHR)) {
                int mask = b.dst().type().isWide() ? 63 : 31;
                if (b.b() instanceof Const c) {
                    assertEquals(c.intValue() & mask, c.intValue(), "constant count out of range: " + b);
                }
            }
        }
    }
}
