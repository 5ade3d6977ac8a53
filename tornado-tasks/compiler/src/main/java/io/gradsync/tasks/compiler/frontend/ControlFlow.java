package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.frontend.Frame.BlockInfo;
import io.gradsync.tasks.compiler.frontend.StackValue.Cmp;
import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.frontend.StackValue.Val;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.Cond;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.lang.classfile.Attributes;
import java.lang.classfile.Instruction;
import java.lang.classfile.Label;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeAnnotation;
import java.lang.classfile.TypeKind;
import java.lang.classfile.instruction.BranchInstruction;
import java.lang.classfile.instruction.IncrementInstruction;
import java.lang.classfile.instruction.LookupSwitchInstruction;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.classfile.instruction.StoreInstruction;
import java.lang.classfile.instruction.SwitchCase;
import java.lang.classfile.instruction.TableSwitchInstruction;
import java.lang.classfile.instruction.ThrowInstruction;
import java.lang.constant.ClassDesc;
import java.util.ArrayList;
import java.util.List;

/**
 * Control flow: finds the kernel's {@code @Parallel} loop and checks that it keeps Java's meaning
 * as independent threads, splits a method's bytecode into blocks at branch targets, translates the
 * reachable blocks, and carries the operand stack along the edges between them; branches,
 * switches and returns end blocks here.
 */
final class ControlFlow extends Stage {
    private static final ClassDesc PARALLEL = ClassDesc.of(Parallel.class.getName());

    ControlFlow(Translation t) {
        super(t);
    }

    ParallelLoop findParallelLoop(Frame f) {
        var attr = f.code.findAttribute(Attributes.runtimeVisibleTypeAnnotations());
        if (attr.isEmpty()) {
            return null;
        }
        ParallelLoop found = null;
        for (TypeAnnotation ta : attr.get().annotations()) {
            if (!ta.annotation().classSymbol().equals(PARALLEL)
                    || !(ta.targetInfo() instanceof TypeAnnotation.LocalVarTarget target)) {
                continue;
            }
            for (TypeAnnotation.LocalVarTargetInfo info : target.table()) {
                int start = f.code.labelToBci(info.startLabel());
                int end = f.code.labelToBci(info.endLabel());
                int slot = info.index();
                f.bci = start;
                if (found != null) {
                    throw f.error("more than one @Parallel loop (only one parallel dimension is supported)");
                }
                Integer startIdx = f.indexOfBci.get(start);
                if (startIdx == null || startIdx == 0
                        || !(f.insns.get(startIdx - 1) instanceof StoreInstruction st)
                        || st.slot() != slot || st.typeKind() != TypeKind.INT) {
                    throw f.error("@Parallel on a variable that is not an int loop counter initialised just before the loop");
                }
                int increment = -1;
                for (int i = startIdx; i < f.insns.size() && f.bcis.get(i) < end; i++) {
                    Instruction ins = f.insns.get(i);
                    f.bci = f.bcis.get(i);
                    if (ins instanceof IncrementInstruction inc && inc.slot() == slot) {
                        if (inc.constant() != 1 || increment >= 0) {
                            throw f.error("@Parallel loop counter must step by exactly one (i++)");
                        }
                        increment = f.bci;
                    } else if (ins instanceof StoreInstruction s2 && s2.slot() == slot) {
                        throw f.error("@Parallel loop counter assigned inside the loop");
                    }
                }
                if (increment < 0) {
                    f.bci = start;
                    throw f.error("@Parallel loop counter without an i++ step");
                }
                found = new ParallelLoop(slot, f.bcis.get(startIdx - 1), increment, start, end);
                checkParallelShape(f, found);
            }
        }
        return found;
    }

    /**
     * A @Parallel loop becomes independent threads, which keeps Java's meaning only if the loop
     * has its one exit test (no break or return: each thread would stop only its own share) and
     * is not nested in another loop (threads would need a barrier between outer iterations).
     */
    private static void checkParallelShape(Frame f, ParallelLoop loop) {
        int exits = 0;
        for (int i = 0; i < f.insns.size(); i++) {
            int bci = f.bcis.get(i);
            Instruction ins = f.insns.get(i);
            f.bci = bci;
            if (ins instanceof BranchInstruction br) {
                int target = f.code.labelToBci(br.target());
                if (loop.contains(bci) && !loop.contains(target) && ++exits > 1) {
                    throw f.error("break out of a @Parallel loop, or a compound loop condition (threads cannot stop each other)");
                }
                if (bci > loop.incrementBci() && target <= loop.initStoreBci()) {
                    throw f.error("@Parallel loop nested inside another loop (threads would need a barrier between outer iterations)");
                }
            } else if (ins instanceof ReturnInstruction && loop.contains(bci)) {
                throw f.error("return inside a @Parallel loop (threads cannot stop each other)");
            }
        }
    }

    /**
     * In a @Parallel-loop kernel every thread runs the code around the loop too, so writes there
     * would race (in Java they happen once): only the loop body may store.
     */
    void checkStoreInsideParallel(Frame f) {
        Frame entry = t.kernelFrame();
        if (entry != null && entry.parallel != null && !entry.parallel.contains(entry.bci)) {
            throw f.error("array store outside the @Parallel loop (every thread would run it)");
        }
    }

    /** Translates all reachable blocks of a frame; the builder's current block jumps into it. */
    void translateFrame(Frame f) {
        for (int i = 0; i < f.insns.size(); i++) {
            Instruction ins = f.insns.get(i);
            if (ins instanceof BranchInstruction br) {
                f.leaders.add(f.code.labelToBci(br.target()));
                if (i + 1 < f.insns.size()) {
                    f.leaders.add(f.bcis.get(i + 1));
                }
            } else if (ins instanceof TableSwitchInstruction ts) {
                f.leaders.add(f.code.labelToBci(ts.defaultTarget()));
                ts.cases().forEach(c -> f.leaders.add(f.code.labelToBci(c.target())));
            } else if (ins instanceof LookupSwitchInstruction ls) {
                f.leaders.add(f.code.labelToBci(ls.defaultTarget()));
                ls.cases().forEach(c -> f.leaders.add(f.code.labelToBci(c.target())));
            } else if (ins instanceof ReturnInstruction || ins instanceof ThrowInstruction) {
                if (i + 1 < f.insns.size()) {
                    f.leaders.add(f.bcis.get(i + 1));
                }
            }
        }
        f.leaders.add(0);
        Block entry = edge(f, 0, new ArrayList<>());
        ir.terminate(new Insn.Jump(entry));
        while (!f.worklist.isEmpty()) {
            translateBlock(f, f.worklist.poll());
        }
    }

    /**
     * The block at {@code target}, entered with {@code stack}: created (and queued) on the first
     * edge, checked for the same stack shape on the others. Numbers on the stack are copied into
     * the per-depth stack variables, the target's only way to see them.
     */
    Block edge(Frame f, int target, List<StackValue> stack) {
        List<Object> shape = new ArrayList<>();
        for (int d = 0; d < stack.size(); d++) {
            StackValue v = stack.get(d);
            if (v instanceof Cmp) {
                v = materialize(v);
                stack.set(d, v);
            }
            shape.add(v instanceof Val val ? val.op().type() : v);
        }
        BlockInfo info = f.blocks.get(target);
        if (info == null) {
            info = new BlockInfo(ir.newBlock(), shape);
            f.blocks.put(target, info);
            f.worklist.add(target);
        } else if (!info.shape().equals(shape)) {
            throw f.error("control flow merge with different operand stacks (for example a conditional choice between two arrays)");
        }
        for (int d = 0; d < stack.size(); d++) {
            if (stack.get(d) instanceof Val val) {
                ir.emit(new Insn.Move(f.stackVar(d, val.op().type()), val.op()));
            }
        }
        return info.block();
    }

    private void translateBlock(Frame f, int startBci) {
        BlockInfo info = f.blocks.get(startBci);
        ir.setCurrent(info.block());
        List<StackValue> stack = new ArrayList<>();
        for (int d = 0; d < info.shape().size(); d++) {
            Object s = info.shape().get(d);
            if (s instanceof IrType ty) {
                Var tmp = ir.newVar(ty, "");
                ir.emit(new Insn.Move(tmp, f.stackVar(d, ty)));
                stack.add(new Val(tmp));
            } else {
                stack.add((StackValue) s);
            }
        }
        int i = f.indexOfBci.get(startBci);
        while (true) {
            Instruction ins = f.insns.get(i);
            f.bci = f.bcis.get(i);
            int next = i + 1 < f.insns.size() ? f.bcis.get(i + 1) : -1;
            boolean ends;
            try {
                ends = t.stack.translateInsn(f, ins, stack, next);
            } catch (KernelCompileException e) {
                throw e;
            } catch (RuntimeException e) {
                throw f.error("internal error translating " + ins.opcode() + ": " + e);
            }
            if (ends) {
                return;
            }
            if (next < 0) {
                throw f.error("execution falls off the end of the method");
            }
            if (f.leaders.contains(next)) {
                ir.terminate(new Insn.Jump(edge(f, next, stack)));
                return;
            }
            i++;
        }
    }

    /** A goto or conditional branch; it ends the block. */
    void translateBranch(Frame f, BranchInstruction br, List<StackValue> stack, int next) {
        int target = f.code.labelToBci(br.target());
        Opcode o = br.opcode();
        if (o == Opcode.GOTO || o == Opcode.GOTO_W) {
            ir.terminate(new Insn.Jump(edge(f, target, stack)));
            return;
        }
        Cond cond;
        Operand a;
        Operand b;
        boolean unordered = false;
        switch (o) {
            case IFEQ, IFNE, IFLT, IFGE, IFGT, IFLE -> {
                cond = Cond.valueOf(o.name().substring(2));
                StackValue v = stack.removeLast();
                if (v instanceof Cmp c) {
                    a = c.a();
                    b = c.b();
                    unordered = cond.test(c.nanResult());
                } else {
                    a = op(f, v);
                    b = Const.ofInt(0);
                }
            }
            case IF_ICMPEQ, IF_ICMPNE, IF_ICMPLT, IF_ICMPGE, IF_ICMPGT, IF_ICMPLE -> {
                cond = Cond.valueOf(o.name().substring(7));
                b = pop(f, stack);
                a = pop(f, stack);
            }
            default -> throw f.error("reference comparison (" + o.name().toLowerCase() + ")");
        }
        if (next < 0) {
            throw f.error("conditional branch at the end of the method");
        }
        if (a instanceof Const ca && b instanceof Const cb && !ca.type().isFloat()) {
            // decided now (an assert, a constant flag): the other side is never translated, so
            // code that only Java can run there (new AssertionError) does not stop the kernel
            boolean takenNow = cond.test(Long.compare(ca.bits(), cb.bits()));
            ir.terminate(new Insn.Jump(edge(f, takenNow ? target : next, stack)));
            return;
        }
        Block taken = edge(f, target, stack);
        Block fall = edge(f, next, stack);
        ir.terminate(new Insn.Branch(cond, a, b, unordered, taken, fall));
    }

    /** A return: into the caller's continuation when inlined, the result through the frame's return variable. */
    void translateReturn(Frame f, ReturnInstruction ri, List<StackValue> stack) {
        if (ri.typeKind() == TypeKind.VOID) {
            // nothing
        } else if (ri.typeKind() == TypeKind.REFERENCE) {
            Ref r = popRef(f, stack);
            if (f.returnedRef != null && !f.returnedRef.equals(r)) {
                throw f.error("method returning different arrays on different paths");
            }
            f.returnedRef = r;
        } else {
            Operand v = pop(f, stack);
            ir.emit(new Insn.Move(f.returnVar, v));
        }
        ir.terminate(f.returnTarget == null ? new Insn.Return() : new Insn.Jump(f.returnTarget));
    }

    /**
     * A switch as a chain of compares, in case order: the device compiler turns a dense chain
     * back into a jump table where that pays.
     */
    void translateSwitch(Frame f, Operand key, List<SwitchCase> cases, Label defaultTarget, List<StackValue> stack) {
        List<Integer> keys = new ArrayList<>();
        List<Block> caseBlocks = new ArrayList<>();
        for (SwitchCase c : cases) {
            keys.add(c.caseValue());
            caseBlocks.add(edge(f, f.code.labelToBci(c.target()), new ArrayList<>(stack)));
        }
        Block otherwise = edge(f, f.code.labelToBci(defaultTarget), new ArrayList<>(stack));
        for (int i = 0; i < keys.size(); i++) {
            Block next = i + 1 < keys.size() ? ir.newBlock() : otherwise;
            ir.terminate(new Insn.Branch(Cond.EQ, key, Const.ofInt(keys.get(i)), false, caseBlocks.get(i), next));
            if (next != otherwise) {
                ir.setCurrent(next);
            }
        }
        if (keys.isEmpty()) {
            ir.terminate(new Insn.Jump(otherwise));
        }
    }
}
