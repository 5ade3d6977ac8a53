package io.gradsync.tasks.compiler.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelIrs;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * After the lowering, no instruction left for an emitter differs from Java on any target: no
 * integer abs, no division that a target leaves undefined, no shift count out of range. (What
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
