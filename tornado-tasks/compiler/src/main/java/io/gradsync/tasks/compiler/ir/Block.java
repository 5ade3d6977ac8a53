package io.gradsync.tasks.compiler.ir;

import java.util.ArrayList;
import java.util.List;

/** A basic block: straight-line instructions and one terminator. */
public final class Block {
    private final int id;
    private final List<Insn> insns = new ArrayList<>();
    private Insn.Terminator terminator;

    Block(int id) {
        this.id = id;
    }

    public int id() {
        return id;
    }

    public List<Insn> insns() {
        return insns;
    }

    public Insn.Terminator terminator() {
        return terminator;
    }

    public boolean isTerminated() {
        return terminator != null;
    }

    void add(Insn insn) {
        if (terminator != null) {
            throw new IllegalStateException("block " + id + " already terminated");
        }
        insns.add(insn);
    }

    void terminate(Insn.Terminator t) {
        if (terminator != null) {
            throw new IllegalStateException("block " + id + " already terminated");
        }
        terminator = t;
    }

    /** Replaces the terminator with {@code copied} instructions and a new terminator (loop rotation). */
    void retarget(List<Insn> copied, Insn.Terminator t) {
        insns.addAll(copied);
        terminator = t;
    }

    /**
     * Appends {@code next}'s instructions and takes its terminator: merges the target of this
     * block's jump, which must have no other predecessor (the optimizer's straight-line chains).
     */
    public void absorb(Block next) {
        if (!(terminator instanceof Insn.Jump j) || j.target() != next || next == this) {
            throw new IllegalArgumentException("B" + id + " does not jump to " + next);
        }
        insns.addAll(next.insns);
        terminator = next.terminator;
    }

    @Override
    public String toString() {
        return "B" + id;
    }
}
