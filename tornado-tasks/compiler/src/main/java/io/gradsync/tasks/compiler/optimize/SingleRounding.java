package io.gradsync.tasks.compiler.optimize;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Folds a double rounded to odd and then stored to a 16-bit array
 * ({@code out.set(i, HalfFloats.roundToOdd(d))}, how a kernel rounds a double once to bf16 or fp16)
 * into one store of the double itself, which the back ends round once: one instruction from sm_90.
 * A float rounded to odd keeps enough bits that rounding it on to 16 bits gives the nearest 16-bit
 * value of the double, so the result is the same bits.
 *
 * <p>Only where the rounded float is read by that store alone, in the same block, and the double
 * is not assigned in between; everything else stays as written.
 */
public final class SingleRounding {
    private SingleRounding() {
    }

    /** {@code ir} with every such pair folded; blocks are rewritten in place. */
    public static KernelIr fold(KernelIr ir) {
        Map<Var, Integer> reads = new HashMap<>();
        for (Block b : ir.blocks()) {
            for (Insn insn : b.insns()) {
                count(reads, ElementwiseLoop.uses(insn));
            }
            count(reads, ElementwiseLoop.uses(b.terminator()));
        }
        for (Block b : ir.blocks()) {
            fold(b, reads);
        }
        return ir;
    }

    private static void count(Map<Var, Integer> reads, List<Operand> operands) {
        for (Operand o : operands) {
            if (o instanceof Var v) {
                reads.merge(v, 1, Integer::sum);
            }
        }
    }

    private static void fold(Block b, Map<Var, Integer> reads) {
        List<Insn> insns = b.insns();
        for (int k = 0; k < insns.size(); k++) {
            if (!(insns.get(k) instanceof Insn.Store s) || s.rawBits() || !s.array().element().isHalf()
                    || !(s.value() instanceof Var rounded) || reads.getOrDefault(rounded, 0) != 1) {
                continue;
            }
            int def = lastDefinition(insns, k, rounded);
            if (def >= 0 && insns.get(def) instanceof Insn.Unary u && u.op() == Insn.UnOp.F64_TO_F32_ODD
                    && u.a().type() == IrType.F64 && !assignedBetween(insns, def, k, u.a())) {
                insns.set(k, new Insn.Store(s.array(), s.index(), u.a(), false));
                insns.remove(def);
                k--;
            }
        }
    }

    private static int lastDefinition(List<Insn> insns, int before, Var v) {
        for (int k = before - 1; k >= 0; k--) {
            if (v.equals(ElementwiseLoop.def(insns.get(k)))) {
                return k;
            }
        }
        return -1;
    }

    private static boolean assignedBetween(List<Insn> insns, int from, int to, Operand o) {
        if (!(o instanceof Var v)) {
            return false;
        }
        for (int k = from + 1; k < to; k++) {
            if (v.equals(ElementwiseLoop.def(insns.get(k)))) {
                return true;
            }
        }
        return false;
    }
}
