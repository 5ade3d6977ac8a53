package io.gradsync.tasks.compiler.optimize;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * Removes the copies that inlining leaves: a called method's parameters, its locals and its
 * result are variables of their own, each a {@code Move} from the caller's, and a branch folded on
 * a constant argument leaves a block that only jumps on. Three steps: a block whose only
 * predecessor jumps to it is merged into that one; inside a block, an instruction reading a
 * variable copied from another reads that other one until either is assigned again (branches keep
 * their operands); a move whose variable nobody reads
 * is dropped. A kernel written with a helper then compiles as if the helper's body had been
 * written out (and, where the loads are at the loop index itself, stays element-wise).
 */
public final class CopyPropagation {
    private CopyPropagation() {
    }

    /** The kernel without the copies; blocks are rewritten in place, merged ones dropped. */
    public static KernelIr propagate(KernelIr ir) {
        List<Block> blocks = mergeChains(ir.blocks());
        for (Block b : blocks) {
            forward(b);
        }
        dropDeadMoves(blocks);
        return new KernelIr(ir.name(), ir.source(), ir.params(), blocks, ir.vars(), ir.writtenArrays(), ir.arrays());
    }

    private static List<Block> mergeChains(List<Block> blocks) {
        Map<Block, Integer> predecessors = new IdentityHashMap<>();
        for (Block b : blocks) {
            switch (b.terminator()) {
                case Insn.Jump j -> predecessors.merge(j.target(), 1, Integer::sum);
                case Insn.Branch br -> {
                    predecessors.merge(br.ifTrue(), 1, Integer::sum);
                    predecessors.merge(br.ifFalse(), 1, Integer::sum);
                }
                default -> {
                }
            }
        }
        Set<Block> merged = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        Block entry = blocks.getFirst();
        for (Block b : blocks) {
            if (merged.contains(b)) {
                continue;
            }
            while (b.terminator() instanceof Insn.Jump j && j.target() != b && j.target() != entry
                    && predecessors.getOrDefault(j.target(), 0) == 1) {
                merged.add(j.target());
                b.absorb(j.target());
            }
        }
        List<Block> kept = new ArrayList<>(blocks.size());
        for (Block b : blocks) {
            if (!merged.contains(b)) {
                kept.add(b);
            }
        }
        return kept;
    }

    /** Reads every copy as its source, within the block, until the copy or the source is assigned again. */
    private static void forward(Block b) {
        Map<Var, Var> copyOf = new HashMap<>();
        UnaryOperator<Operand> read = o -> o instanceof Var v && copyOf.containsKey(v) ? copyOf.get(v) : o;
        List<Insn> insns = b.insns();
        for (int k = 0; k < insns.size(); k++) {
            Insn insn = withUses(insns.get(k), read);
            insns.set(k, insn);
            Var d = ElementwiseLoop.def(insn);
            if (d != null) {
                copyOf.remove(d);
                copyOf.values().removeIf(d::equals);
                if (insn instanceof Insn.Move m && m.src() instanceof Var s && !s.equals(d) && s.type() == d.type()) {
                    copyOf.put(d, s);
                }
            }
        }
        // the terminator keeps its operands: a loop's entry test and its rotated copy at the end
        // of the body must stay the same branch, which is how the element-wise analysis finds the loop
    }

    private static void dropDeadMoves(List<Block> blocks) {
        boolean changed = true;
        while (changed) {
            Set<Var> read = new HashSet<>();
            for (Block b : blocks) {
                for (Insn insn : b.insns()) {
                    for (Operand o : ElementwiseLoop.uses(insn)) {
                        if (o instanceof Var v) {
                            read.add(v);
                        }
                    }
                }
                for (Operand o : ElementwiseLoop.uses(b.terminator())) {
                    if (o instanceof Var v) {
                        read.add(v);
                    }
                }
            }
            changed = false;
            for (Block b : blocks) {
                changed |= b.insns().removeIf(i -> i instanceof Insn.Move m && !read.contains(m.dst()));
            }
        }
    }

    /** {@code insn} with every operand it reads passed through {@code read}. */
    static Insn withUses(Insn insn, UnaryOperator<Operand> read) {
        return switch (insn) {
            case Insn.Move m -> new Insn.Move(m.dst(), read.apply(m.src()));
            case Insn.Binary x -> new Insn.Binary(x.op(), x.dst(), read.apply(x.a()), read.apply(x.b()));
            case Insn.Unary x -> new Insn.Unary(x.op(), x.dst(), read.apply(x.a()));
            case Insn.Fma x -> new Insn.Fma(x.dst(), read.apply(x.a()), read.apply(x.b()), read.apply(x.c()));
            case Insn.Select x -> new Insn.Select(x.dst(), x.cond(), read.apply(x.a()), read.apply(x.b()),
                    read.apply(x.ifTrue()), read.apply(x.ifFalse()));
            case Insn.Convert x -> new Insn.Convert(x.op(), x.dst(), read.apply(x.src()));
            case Insn.Compare3 x -> new Insn.Compare3(x.dst(), read.apply(x.a()), read.apply(x.b()), x.nanResult());
            case Insn.Load x -> new Insn.Load(x.dst(), x.array(), read.apply(x.index()), x.rawBits());
            case Insn.Store x -> new Insn.Store(x.array(), read.apply(x.index()), read.apply(x.value()), x.rawBits());
            case Insn.AtomicAdd x -> new Insn.AtomicAdd(x.array(), read.apply(x.index()), read.apply(x.value()));
            case Insn.Atomic x -> new Insn.Atomic(x.op(), x.dst(), x.array(), read.apply(x.index()),
                    x.value() == null ? null : read.apply(x.value()), x.expected() == null ? null : read.apply(x.expected()),
                    x.scope(), x.order());
            case Insn.ArrayLoad x -> new Insn.ArrayLoad(x.dst(), x.array(), read.apply(x.index()));
            case Insn.ArrayStore x -> new Insn.ArrayStore(x.array(), read.apply(x.index()), read.apply(x.value()));
            case Insn.WarpReduce x -> new Insn.WarpReduce(x.max(), x.dst(), read.apply(x.value()));
            case Insn.ArrayLength x -> x;
            case Insn.Thread x -> x;
            case Insn.ArrayZero x -> x;
            case Insn.Barrier x -> x;
            case Insn.Terminator x -> x;
        };
    }
}
