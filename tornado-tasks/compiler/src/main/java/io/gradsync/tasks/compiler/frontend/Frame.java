package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Var;

import java.lang.classfile.CodeElement;
import java.lang.classfile.Instruction;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.instruction.ExceptionCatch;
import java.lang.classfile.instruction.IncrementInstruction;
import java.lang.classfile.instruction.LineNumber;
import java.lang.classfile.instruction.LocalVariable;
import java.lang.classfile.instruction.MonitorInstruction;
import java.lang.classfile.instruction.StoreInstruction;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * One method being translated (the kernel, or a method inlined into it): its instructions by
 * offset, its blocks, its locals as IR variables, and where a return goes. Errors are made here
 * because only the frame knows the offset being translated and the chain of callers.
 */
final class Frame {
    /** A block started at a bytecode offset, with the operand stack it is entered with (types, or references). */
    record BlockInfo(Block block, List<Object> shape) {
    }

    private final Translation t;
    final Class<?> owner;
    final MethodModel method;
    final CodeAttribute code;
    final String methodId;
    final List<Instruction> insns = new ArrayList<>();
    final List<Integer> bcis = new ArrayList<>();
    final Map<Integer, Integer> indexOfBci = new HashMap<>();
    final TreeSet<Integer> leaders = new TreeSet<>();
    final Map<Long, Var> locals = new HashMap<>();
    final Map<Integer, Ref> refLocals = new HashMap<>();
    final Map<Long, Var> stackVars = new HashMap<>();
    final Map<Integer, BlockInfo> blocks = new HashMap<>();
    final Map<Integer, String> localNames = new HashMap<>();
    /** Source lines by the offset where each starts (javac's line table; empty if compiled without it). */
    final java.util.TreeMap<Integer, Integer> lineAtBci = new java.util.TreeMap<>();
    /** In-kernel arrays by allocation site, so that a {@code new} run in a loop is one array. */
    final Map<Integer, MemArray> arraysAtBci = new HashMap<>();
    /** Parameters passed constants and never assigned in this method: read as the constants. */
    final Map<Integer, Const> constants = new HashMap<>();
    final Deque<Integer> worklist = new ArrayDeque<>();
    final Block returnTarget;
    final Var returnVar;
    Ref returnedRef;
    ParallelLoop parallel;
    int bci;

    Frame(Translation t, Class<?> owner, MethodModel method, Block returnTarget, Var returnVar) {
        this.t = t;
        this.owner = owner;
        this.method = method;
        this.methodId = method.methodName().stringValue() + method.methodType().stringValue();
        this.returnTarget = returnTarget;
        this.returnVar = returnVar;
        this.code = (CodeAttribute) method.code().orElseThrow(() -> error("method without bytecode (native or abstract)"));
        int pos = 0;
        int handlerBci = -1;
        for (CodeElement e : code) {
            switch (e) {
                case Instruction ins -> {
                    indexOfBci.put(pos, insns.size());
                    insns.add(ins);
                    bcis.add(pos);
                    pos += ins.sizeInBytes();
                }
                case ExceptionCatch ec -> {
                    if (handlerBci < 0) {
                        handlerBci = code.labelToBci(ec.tryStart());
                    }
                }
                case LocalVariable lv -> localNames.putIfAbsent(lv.slot(), lv.name().stringValue());
                case LineNumber ln -> lineAtBci.put(pos, ln.line());
                default -> {
                }
            }
        }
        if (handlerBci >= 0) {
            // synchronized blocks come with a handler; name the more specific construct
            for (int i = 0; i < insns.size(); i++) {
                if (insns.get(i) instanceof MonitorInstruction) {
                    bci = bcis.get(i);
                    throw error("synchronized block (monitorenter)");
                }
            }
            bci = handlerBci;
            throw error("try/catch or try/finally (exception handler)");
        }
    }

    /** Whether any instruction of this method stores into local {@code slot}. */
    boolean assigned(int slot) {
        for (Instruction ins : insns) {
            if ((ins instanceof StoreInstruction st && st.slot() == slot) || (ins instanceof IncrementInstruction inc && inc.slot() == slot)) {
                return true;
            }
        }
        return false;
    }

    /** The construct at the current offset, with the chain of calls it was inlined through. */
    KernelCompileException error(String construct) {
        StringBuilder chain = new StringBuilder();
        boolean first = true;
        for (Frame f : t.frames) {
            if (f == this) {
                continue;
            }
            chain.append(first ? "inlined into " : ", called from ")
                    .append(f.owner.getName()).append('.').append(f.methodId).append(" at offset ").append(f.bci);
            int line = f.lineOf(f.bci);
            if (line > 0) {
                chain.append(" (line ").append(line).append(')');
            }
            first = false;
        }
        return new KernelCompileException(owner.getName(), methodId, bci, lineOf(bci), construct, chain.toString());
    }

    /** The source line of the instruction at {@code offset}, or -1 where the class has no line table. */
    int lineOf(int offset) {
        var e = lineAtBci.floorEntry(offset);
        return e == null || offset < 0 ? -1 : e.getValue();
    }

    /** Java local {@code slot} read or written as {@code type}: one variable per (slot, type). */
    Var local(int slot, IrType type) {
        return locals.computeIfAbsent(((long) slot << 3) | type.ordinal(),
                k -> t.ir.newVar(type, localNames.getOrDefault(slot, "")));
    }

    /** The variable carrying stack depth {@code depth} of {@code type} across a block boundary. */
    Var stackVar(int depth, IrType type) {
        return stackVars.computeIfAbsent(((long) depth << 3) | type.ordinal(), k -> t.ir.newVar(type, "s" + depth));
    }
}
