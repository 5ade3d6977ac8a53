package io.gradsync.tasks.compiler.ir;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Collects blocks and variables while a front end translates a kernel. */
public final class IrBuilder {
    private final List<Block> blocks = new ArrayList<>();
    private final List<Var> vars = new ArrayList<>();
    private final List<MemArray> arrays = new ArrayList<>();
    private final Set<String> writtenArrays = new LinkedHashSet<>();
    private Block current;

    public Block newBlock() {
        Block b = new Block(blocks.size());
        blocks.add(b);
        return b;
    }

    /** A new in-kernel array; a table's contents are given, the others start as zeros. */
    public MemArray newArray(MemArray.Space space, char javaType, int length, long[] table) {
        MemArray a = new MemArray(arrays.size(), space, javaType, length, table);
        arrays.add(a);
        return a;
    }

    public Var newVar(IrType type, String hint) {
        Var v = new Var(vars.size(), type, hint == null ? "" : hint);
        vars.add(v);
        return v;
    }

    public Block current() {
        return current;
    }

    public void setCurrent(Block block) {
        this.current = block;
    }

    public void emit(Insn insn) {
        if (insn instanceof Insn.Store s) {
            writtenArrays.add(s.array().name());
        } else if (insn instanceof Insn.AtomicAdd a) {
            writtenArrays.add(a.array().name());
        } else if (insn instanceof Insn.Atomic a && a.op() != Insn.AtomicOp.LOAD) {
            writtenArrays.add(a.array().name());
        }
        current.add(insn);
    }

    public void terminate(Insn.Terminator t) {
        current.terminate(t);
    }

    /** Finishes the kernel: keeps the blocks reachable from {@code entry}, in reverse postorder. */
    public KernelIr finish(String name, String source, List<KernelParam> params, Block entry) {
        rotateLoops();
        List<Block> order = new ArrayList<>();
        Set<Block> seen = new HashSet<>();
        // iterative DFS computing postorder
        Deque<Object[]> stack = new ArrayDeque<>();
        stack.push(new Object[]{entry, 0});
        seen.add(entry);
        while (!stack.isEmpty()) {
            Object[] top = stack.peek();
            Block b = (Block) top[0];
            List<Block> succ = successors(b);
            int i = (Integer) top[1];
            if (i < succ.size()) {
                top[1] = i + 1;
                Block s = succ.get(i);
                if (seen.add(s)) {
                    stack.push(new Object[]{s, 0});
                }
            } else {
                stack.pop();
                order.add(b);
            }
        }
        java.util.Collections.reverse(order);
        for (Block b : order) {
            if (!b.isTerminated()) {
                throw new IllegalStateException("block " + b + " has no terminator");
            }
        }
        return new KernelIr(name, source, List.copyOf(params), List.copyOf(order), List.copyOf(vars), Set.copyOf(writtenArrays), List.copyOf(arrays));
    }

    /**
     * Copies a small loop test into the blocks that jump to it, so that the back edge of a
     * top-tested loop ({@code while (i < n) {...; i += stride;}}) branches on the test itself
     * instead of jumping back to it: the bottom-tested shape nvcc emits, one branch per iteration.
     * Only blocks of at most {@value #MAX_DUPLICATED} instructions ending in a conditional branch
     * are copied; repeating them is harmless because the jump would execute them next anyway.
     */
    private void rotateLoops() {
        for (Block b : blocks) {
            if (b.terminator() instanceof Insn.Jump j && j.target() != b
                    && j.target().terminator() instanceof Insn.Branch br
                    && j.target().insns().size() <= MAX_DUPLICATED
                    && j.target().insns().stream().noneMatch(i -> i instanceof Insn.Barrier || i instanceof Insn.WarpReduce)) {
                // a barrier stays one instruction: threads of a group must all wait at the same one
                b.retarget(j.target().insns(), br);
            }
        }
    }

    private static final int MAX_DUPLICATED = 4;

    public static List<Block> successors(Block b) {
        return switch (b.terminator()) {
            case Insn.Jump j -> List.of(j.target());
            // false successor first so that it tends to follow the block (fall-through)
            case Insn.Branch br -> List.of(br.ifTrue(), br.ifFalse());
            case Insn.Return r -> List.of();
            case null -> List.of();
        };
    }
}
