package io.gradsync.tasks.compiler.optimize;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The scalar a kernel compares its global index with: {@code n} in
 * {@code for (@Parallel int i = 0; i < n; i++)} or in {@code if (ctx.globalIdx() < n)}, whatever
 * else the kernel does. Where a caller passes the element count: unlike {@link ElementwiseLoop},
 * which the vector forms need, it asks nothing of the loop's body.
 *
 * <p>Thread-safety: stateless.
 */
public final class IndexBound {
    private IndexBound() {
    }

    /**
     * The one scalar parameter, never assigned in the kernel, that a branch compares the global
     * index with as its upper bound ({@code i < n}, {@code i >= n} and their mirrors); the global
     * index is the thread's first-dimension index, its copies, and a {@code @Parallel} counter
     * stepped by the global size. Empty where no such scalar, or more than one, is compared.
     */
    public static Optional<String> scalar(KernelIr ir) {
        Set<Var> indices = indices(ir);
        Set<String> names = new HashSet<>();
        for (Block b : ir.blocks()) {
            if (b.terminator() instanceof Insn.Branch br) {
                Operand bound = null;
                if (br.a() instanceof Var v && indices.contains(v) && (br.cond() == Insn.Cond.LT || br.cond() == Insn.Cond.GE)) {
                    bound = br.b();
                } else if (br.b() instanceof Var v && indices.contains(v) && (br.cond() == Insn.Cond.GT || br.cond() == Insn.Cond.LE)) {
                    bound = br.a();
                }
                if (bound != null) {
                    ElementwiseLoop.boundScalar(ir, bound).ifPresent(names::add);
                }
            }
        }
        return names.size() == 1 ? Optional.of(names.iterator().next()) : Optional.empty();
    }

    /** The variables that hold the global index: its query's result, copies of them, and counters stepped by the global size. */
    private static Set<Var> indices(KernelIr ir) {
        Set<Var> sizes = new HashSet<>();
        Set<Var> indices = new HashSet<>();
        for (Block b : ir.blocks()) {
            for (Insn insn : b.insns()) {
                if (insn instanceof Insn.Thread t && t.dim() == 0) {
                    if (t.query() == Insn.ThreadQuery.GLOBAL_SIZE) {
                        sizes.add(t.dst());
                    } else if (t.query() == Insn.ThreadQuery.GLOBAL_IDX) {
                        indices.add(t.dst());
                    }
                }
            }
        }
        for (boolean grew = true; grew; ) {
            grew = false;
            for (Block b : ir.blocks()) {
                for (Insn insn : b.insns()) {
                    Var added = switch (insn) {
                        case Insn.Move m when m.src() instanceof Var s && indices.contains(s) -> m.dst();
                        case Insn.Binary add when add.op() == Insn.BinOp.ADD && (steps(add.dst(), add.a(), add.b(), sizes)
                                || steps(add.dst(), add.b(), add.a(), sizes)) -> add.dst();
                        default -> null;
                    };
                    grew |= added != null && indices.add(added);
                }
            }
        }
        return indices;
    }

    /** {@code dst = counter + step}: the counter stepped in place by the global size. */
    private static boolean steps(Var dst, Operand counter, Operand step, Set<Var> sizes) {
        return dst.equals(counter) && step instanceof Var s && sizes.contains(s);
    }
}
