package io.gradsync.tasks.compiler;

import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.Insn.Cond;
import io.gradsync.tasks.compiler.ir.Insn.ConvOp;
import io.gradsync.tasks.compiler.ir.Insn.ThreadQuery;
import io.gradsync.tasks.compiler.ir.Insn.UnOp;
import io.gradsync.tasks.compiler.ir.IrBuilder;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeElement;
import java.lang.classfile.Instruction;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeAnnotation;
import java.lang.classfile.TypeKind;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.instruction.*;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.reflect.AccessFlag;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Translates a static Java method's bytecode (read with {@code java.lang.classfile}) into
 * {@link KernelIr}, inlining every static call.
 *
 * <p>How: the operand stack is simulated per basic block; every value is an IR operand, Java locals
 * are one variable per (slot, type), and values left on the stack at a block boundary (the
 * ternary operator) travel through per-depth stack variables. Kernel array parameters and the
 * {@code KernelContext} are tracked symbolically (they are never values on the device), which is
 * why a reference local may only ever hold one of them. Anything that has no meaning on a device
 * is rejected with a {@link KernelCompileException} at the offending instruction.
 */
final class BytecodeTranslator {
    private static final String API = "io/gradsync/tasks/api/";
    private static final ClassDesc PARALLEL = ClassDesc.of(Parallel.class.getName());
    private static final int MAX_INLINE_DEPTH = 32;

    private final IrBuilder ir = new IrBuilder();
    private final Deque<Frame> frames = new ArrayDeque<>();
    private KernelStyle style;

    /** A value on the simulated operand stack. */
    private sealed interface SVal permits Val, Ref, Cmp {
    }

    private record Val(Operand op) implements SVal {
    }

    /** A reference: a kernel array parameter or the KernelContext (target == CONTEXT). */
    private record Ref(Object target) implements SVal {
    }

    private static final Object CONTEXT = new Object() {
        @Override
        public String toString() {
            return "KernelContext";
        }
    };

    /** A three-way compare not yet materialized, so that the following if can branch on it directly. */
    private record Cmp(Operand a, Operand b, int nanResult) implements SVal {
    }

    /** The @Parallel loop of the kernel method: its induction slot, init store and increment. */
    private record ParallelLoop(int slot, int initStoreBci, int incrementBci, int startBci, int endBci) {
        boolean contains(int bci) {
            return bci >= startBci && bci < endBci;
        }
    }

    private record BlockInfo(Block block, List<Object> shape) {
    }

    /** One method being translated (the kernel, or a method inlined into it). */
    private final class Frame {
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
        /** In-kernel arrays by allocation site, so that a {@code new} run in a loop is one array. */
        final Map<Integer, MemArray> arraysAtBci = new HashMap<>();
        /** Parameters passed constants and never assigned in this method: read as the constants. */
        final Map<Integer, Const> constants = new HashMap<>();

        /** Whether any instruction of this method stores into local {@code slot}. */
        boolean assigned(int slot) {
            for (Instruction ins : insns) {
                if ((ins instanceof StoreInstruction st && st.slot() == slot) || (ins instanceof IncrementInstruction inc && inc.slot() == slot)) {
                    return true;
                }
            }
            return false;
        }
        final Deque<Integer> worklist = new ArrayDeque<>();
        final Block returnTarget;
        final Var returnVar;
        Ref returnedRef;
        ParallelLoop parallel;
        int bci;

        Frame(Class<?> owner, MethodModel method, Block returnTarget, Var returnVar) {
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

        KernelCompileException error(String construct) {
            StringBuilder chain = new StringBuilder();
            boolean first = true;
            for (Frame f : frames) {
                if (f == this) {
                    continue;
                }
                chain.append(first ? "inlined into " : ", called from ")
                        .append(f.owner.getName()).append('.').append(f.methodId).append(" at offset ").append(f.bci);
                first = false;
            }
            return new KernelCompileException(owner.getName(), methodId, bci, construct, chain.toString());
        }

        Var local(int slot, IrType type) {
            return locals.computeIfAbsent(((long) slot << 3) | type.ordinal(),
                    k -> ir.newVar(type, localNames.getOrDefault(slot, "")));
        }

        Var stackVar(int depth, IrType type) {
            return stackVars.computeIfAbsent(((long) depth << 3) | type.ordinal(), k -> ir.newVar(type, "s" + depth));
        }
    }

    // ------------------------------------------------------------------------------------------

    /** Translates the static method {@code name + descriptor} of {@code owner} into a kernel. */
    KernelIr translate(Class<?> owner, String name, String descriptor) {
        MethodModel method = findMethod(owner, name, descriptor, null);
        Frame frame = new Frame(owner, method, null, null);
        frames.push(frame);
        frame.bci = -1;
        checkCallable(frame, method);
        if (!MethodTypeDesc.ofDescriptor(descriptor).returnType().descriptorString().equals("V")) {
            throw frame.error("kernel method must return void");
        }
        List<KernelParam> params = new ArrayList<>();
        MethodTypeDesc type = MethodTypeDesc.ofDescriptor(descriptor);
        List<String> names = parameterNames(frame, type);
        java.util.Set<String> usedNames = new java.util.HashSet<>();
        int slot = 0;
        Block entry = ir.newBlock();
        ir.setCurrent(entry);
        for (int i = 0; i < type.parameterCount(); i++) {
            ClassDesc p = type.parameterType(i);
            String pname = sanitize(names.get(i));
            while (!usedNames.add(pname)) {
                pname = pname + "_" + i; // '$' and '_' map alike: keep every parameter's name its own
            }
            ElementKind kind = arrayKind(p);
            if (kind != null) {
                ArrayParam ap = new ArrayParam(pname, i, kind);
                params.add(ap);
                frame.refLocals.put(slot, new Ref(ap));
                slot++;
            } else if (p.descriptorString().equals("L" + API + "KernelContext;")) {
                params.add(new KernelParam.ContextParam(pname, i));
                frame.refLocals.put(slot, new Ref(CONTEXT));
                slot++;
            } else if (p.isPrimitive()) {
                IrType t = irType(p.descriptorString().charAt(0));
                Var v = frame.local(slot, t);
                params.add(new KernelParam.ScalarParam(pname, i, t, v));
                slot += t.isWide() ? 2 : 1;
            } else {
                throw frame.error("kernel parameter " + i + " of type " + p.displayName()
                        + " (kernels take FloatArray, DoubleArray, IntArray, LongArray, HalfArray, Bfloat16Array, KernelContext or primitives)");
            }
        }
        frame.parallel = findParallelLoop(frame);
        boolean hasContext = params.stream().anyMatch(p -> p instanceof KernelParam.ContextParam);
        if (frame.parallel != null && hasContext) {
            frame.bci = frame.parallel.initStoreBci;
            throw frame.error("@Parallel loop in a kernel that also takes a KernelContext (use one style)");
        }
        style = hasContext ? KernelStyle.CONTEXT : frame.parallel != null ? KernelStyle.PARALLEL_LOOP : KernelStyle.SERIAL;
        if (frame.parallel == null && !hasContext) {
            // A serial kernel must run once, whatever the launch size: only global thread 0 works.
            Var gid = ir.newVar(IrType.I32, "gid");
            ir.emit(new Insn.Thread(ThreadQuery.GLOBAL_IDX, gid));
            Block work = ir.newBlock();
            Block exit = ir.newBlock();
            ir.terminate(new Insn.Branch(Cond.EQ, gid, Const.ofInt(0), false, work, exit));
            ir.setCurrent(exit);
            ir.terminate(new Insn.Return());
            ir.setCurrent(work);
        }
        translateFrame(frame);
        frames.pop();
        String source = owner.getName() + "." + frame.methodId;
        return ir.finish(sanitize(name), source, params, entry);
    }

    /** The style of the kernel last translated. */
    KernelStyle style() {
        return style;
    }

    private static List<String> parameterNames(Frame frame, MethodTypeDesc type) {
        List<String> names = new ArrayList<>();
        var attr = frame.method.findAttribute(Attributes.methodParameters());
        if (attr.isPresent() && attr.get().parameters().size() == type.parameterCount()) {
            int i = 0;
            for (var p : attr.get().parameters()) {
                int idx = i++;
                names.add(p.name().map(u -> u.stringValue()).orElse("p" + idx));
            }
            return names;
        }
        int slot = 0;
        for (int i = 0; i < type.parameterCount(); i++) {
            names.add(frame.localNames.getOrDefault(slot, "p" + i));
            String d = type.parameterType(i).descriptorString();
            slot += d.equals("J") || d.equals("D") ? 2 : 1;
        }
        return names;
    }

    /**
     * A name both C and PTX accept: ASCII letters, digits and '_' kept, any other character as
     * {@code _uXXXX} (so that names in other scripts stay distinct), never starting with a digit.
     * The emitters add their own prefixes, so keywords need no care here.
     */
    static String sanitize(String name) {
        StringBuilder b = new StringBuilder();
        for (char c : name.toCharArray()) {
            if ((c < 128 && Character.isLetterOrDigit(c)) || c == '_') {
                b.append(c);
            } else {
                b.append(String.format("_u%04x", (int) c));
            }
        }
        if (b.isEmpty() || Character.isDigit(b.charAt(0))) {
            b.insert(0, '_');
        }
        return b.toString();
    }

    private ParallelLoop findParallelLoop(Frame f) {
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
                if (bci > loop.incrementBci && target <= loop.initStoreBci) {
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
    private void checkStoreInsideParallel(Frame f) {
        Frame entry = frames.peekLast();
        if (entry != null && entry.parallel != null && !entry.parallel.contains(entry.bci)) {
            throw f.error("array store outside the @Parallel loop (every thread would run it)");
        }
    }

    // ------------------------------------------------------------------------------------------

    /** Translates all reachable blocks of a frame; the builder's current block jumps into it. */
    private void translateFrame(Frame f) {
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

    private Block edge(Frame f, int target, List<SVal> stack) {
        List<Object> shape = new ArrayList<>();
        for (int d = 0; d < stack.size(); d++) {
            SVal v = stack.get(d);
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
        } else if (!info.shape.equals(shape)) {
            throw f.error("control flow merge with different operand stacks (for example a conditional choice between two arrays)");
        }
        for (int d = 0; d < stack.size(); d++) {
            if (stack.get(d) instanceof Val val) {
                ir.emit(new Insn.Move(f.stackVar(d, val.op().type()), val.op()));
            }
        }
        return info.block;
    }

    private void translateBlock(Frame f, int startBci) {
        BlockInfo info = f.blocks.get(startBci);
        ir.setCurrent(info.block);
        List<SVal> stack = new ArrayList<>();
        for (int d = 0; d < info.shape.size(); d++) {
            Object s = info.shape.get(d);
            if (s instanceof IrType t) {
                Var tmp = ir.newVar(t, "");
                ir.emit(new Insn.Move(tmp, f.stackVar(d, t)));
                stack.add(new Val(tmp));
            } else {
                stack.add((SVal) s);
            }
        }
        int i = f.indexOfBci.get(startBci);
        while (true) {
            Instruction ins = f.insns.get(i);
            f.bci = f.bcis.get(i);
            int next = i + 1 < f.insns.size() ? f.bcis.get(i + 1) : -1;
            boolean ends;
            try {
                ends = translateInsn(f, ins, stack, next);
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

    // ------------------------------------------------------------------------------------------

    private static Operand op(Frame f, SVal v) {
        if (v instanceof Val val) {
            return val.op();
        }
        throw f.error("a reference (array or KernelContext) used as a number");
    }

    private Val materialize(SVal v) {
        if (v instanceof Cmp c) {
            Var dst = ir.newVar(IrType.I32, "");
            ir.emit(new Insn.Compare3(dst, c.a, c.b, c.nanResult));
            return new Val(dst);
        }
        return (Val) v;
    }

    private Operand pop(Frame f, List<SVal> stack) {
        SVal v = stack.removeLast();
        if (v instanceof Cmp) {
            v = materialize(v);
        }
        return op(f, v);
    }

    private Ref popRef(Frame f, List<SVal> stack) {
        SVal v = stack.removeLast();
        if (v instanceof Ref r) {
            return r;
        }
        throw f.error("expected an array or KernelContext reference on the stack");
    }

    private void push(List<SVal> stack, Operand o) {
        stack.add(new Val(o));
    }

    /** Before a local is overwritten, copies stack entries that still refer to its old value. */
    private void protect(List<SVal> stack, Var local) {
        for (int d = 0; d < stack.size(); d++) {
            SVal v = stack.get(d);
            if (v instanceof Val val && val.op().equals(local)) {
                Var copy = ir.newVar(local.type(), "");
                ir.emit(new Insn.Move(copy, local));
                stack.set(d, new Val(copy));
            } else if (v instanceof Cmp c && (c.a.equals(local) || c.b.equals(local))) {
                stack.set(d, materialize(c));
            }
        }
    }

    private Var binary(BinOp op, Operand a, Operand b) {
        Var dst = ir.newVar(a.type(), "");
        ir.emit(new Insn.Binary(op, dst, a, b));
        return dst;
    }

    private static boolean isCategory2(SVal v) {
        return v instanceof Val val && val.op().type().isWide();
    }

    /** Returns true when the instruction ended the block. */
    private boolean translateInsn(Frame f, Instruction ins, List<SVal> stack, int next) {
        switch (ins) {
            case LoadInstruction li -> {
                if (li.typeKind() == TypeKind.REFERENCE) {
                    Ref r = f.refLocals.get(li.slot());
                    if (r == null) {
                        throw f.error("reference local variable (slot " + li.slot() + ") that does not hold a kernel array parameter");
                    }
                    stack.add(r);
                } else if (f.constants.containsKey(li.slot())) {
                    push(stack, f.constants.get(li.slot()));
                } else {
                    push(stack, f.local(li.slot(), irType(li.typeKind())));
                }
            }
            case StoreInstruction si -> {
                if (si.typeKind() == TypeKind.REFERENCE) {
                    Ref r = popRef(f, stack);
                    Ref old = f.refLocals.get(si.slot());
                    if (old != null && !old.equals(r)) {
                        throw f.error("reference local variable (slot " + si.slot() + ") assigned two different arrays");
                    }
                    f.refLocals.put(si.slot(), r);
                } else {
                    Operand value = pop(f, stack);
                    Var local = f.local(si.slot(), irType(si.typeKind()));
                    protect(stack, local);
                    if (f.parallel != null && f.bci == f.parallel.initStoreBci) {
                        Var gid = ir.newVar(IrType.I32, "gid");
                        ir.emit(new Insn.Thread(ThreadQuery.GLOBAL_IDX, gid));
                        ir.emit(new Insn.Binary(BinOp.ADD, local, value, gid));
                    } else {
                        ir.emit(new Insn.Move(local, value));
                    }
                }
            }
            case IncrementInstruction inc -> {
                Var local = f.local(inc.slot(), IrType.I32);
                protect(stack, local);
                if (f.parallel != null && f.bci == f.parallel.incrementBci) {
                    Var size = ir.newVar(IrType.I32, "gsize");
                    ir.emit(new Insn.Thread(ThreadQuery.GLOBAL_SIZE, size));
                    ir.emit(new Insn.Binary(BinOp.ADD, local, local, size));
                } else {
                    ir.emit(new Insn.Binary(BinOp.ADD, local, local, Const.ofInt(inc.constant())));
                }
            }
            case ConstantInstruction ci -> {
                Object c = ci.opcode() == Opcode.ACONST_NULL ? null : ci.constantValue();
                switch (c) {
                    case Integer v -> push(stack, Const.ofInt(v));
                    case Long v -> push(stack, Const.ofLong(v));
                    case Float v -> push(stack, Const.ofFloat(v));
                    case Double v -> push(stack, Const.ofDouble(v));
                    case null -> throw f.error("null reference");
                    default -> throw f.error("constant of type " + c.getClass().getSimpleName() + " (strings, classes and method handles)");
                }
            }
            case OperatorInstruction oi -> translateOperator(f, oi, stack);
            case ConvertInstruction cv -> {
                Operand src = pop(f, stack);
                ConvOp op = ConvOp.valueOf(cv.opcode().name());
                IrType to = switch (op) {
                    case I2L, F2L, D2L -> IrType.I64;
                    case I2F, L2F, D2F -> IrType.F32;
                    case I2D, L2D, F2D -> IrType.F64;
                    default -> IrType.I32;
                };
                Var dst = ir.newVar(to, "");
                ir.emit(new Insn.Convert(op, dst, src));
                push(stack, dst);
            }
            case BranchInstruction br -> {
                int target = f.code.labelToBci(br.target());
                Opcode o = br.opcode();
                if (o == Opcode.GOTO || o == Opcode.GOTO_W) {
                    ir.terminate(new Insn.Jump(edge(f, target, stack)));
                    return true;
                }
                Cond cond;
                Operand a;
                Operand b;
                boolean unordered = false;
                switch (o) {
                    case IFEQ, IFNE, IFLT, IFGE, IFGT, IFLE -> {
                        cond = Cond.valueOf(o.name().substring(2));
                        SVal v = stack.removeLast();
                        if (v instanceof Cmp c) {
                            a = c.a;
                            b = c.b;
                            unordered = cond.test(c.nanResult);
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
                    return true;
                }
                Block taken = edge(f, target, stack);
                Block fall = edge(f, next, stack);
                ir.terminate(new Insn.Branch(cond, a, b, unordered, taken, fall));
                return true;
            }
            case ReturnInstruction ri -> {
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
                return true;
            }
            case StackInstruction st -> translateStack(f, st.opcode(), stack);
            case InvokeInstruction inv -> translateInvoke(f, inv, stack);
            case FieldInstruction fi -> {
                if (fi.opcode() != Opcode.GETSTATIC) {
                    throw f.error(switch (fi.opcode()) {
                        case PUTSTATIC -> "write to static field " + fi.owner().asInternalName() + "." + fi.name().stringValue();
                        default -> "instance field access " + fi.owner().asInternalName() + "." + fi.name().stringValue();
                    });
                }
                SVal v = staticValue(f, fi);
                stack.add(v);
            }
            case NopInstruction n -> {
            }
            case ArrayLoadInstruction a -> {
                Operand index = pop(f, stack);
                MemArray m = memArray(f, popRef(f, stack), a.typeKind());
                Var dst = ir.newVar(m.valueType(), "");
                ir.emit(new Insn.ArrayLoad(dst, m, index));
                push(stack, dst);
            }
            case ArrayStoreInstruction a -> {
                Operand value = pop(f, stack);
                Operand index = pop(f, stack);
                MemArray m = memArray(f, popRef(f, stack), a.typeKind());
                if (m.space() == MemArray.Space.TABLE) {
                    throw f.error("write to a static final array (its contents are fixed when the kernel is compiled)");
                }
                ir.emit(new Insn.ArrayStore(m, index, value));
            }
            case NewObjectInstruction n -> throw f.error("object allocation (new " + n.className().asInternalName() + ")");
            case NewPrimitiveArrayInstruction n -> {
                Operand length = pop(f, stack);
                stack.add(new Ref(privateArray(f, n.typeKind(), length)));
            }
            case NewReferenceArrayInstruction n -> throw f.error("array allocation (new " + n.componentType().asInternalName() + "[])");
            case NewMultiArrayInstruction n -> throw f.error("array allocation (multi-dimensional)");
            case ThrowInstruction t -> throw f.error("throwing an exception (athrow)");
            case MonitorInstruction m -> throw f.error("synchronized block (" + m.opcode().name().toLowerCase() + ")");
            case TypeCheckInstruction t -> throw f.error("type check (" + t.opcode().name().toLowerCase() + " " + t.type().asInternalName() + ")");
            case InvokeDynamicInstruction d -> throw f.error("invokedynamic (lambda, method reference or string concatenation: " + d.name().stringValue() + ")");
            case TableSwitchInstruction s -> {
                translateSwitch(f, pop(f, stack), s.cases(), s.defaultTarget(), stack);
                return true;
            }
            case LookupSwitchInstruction s -> {
                translateSwitch(f, pop(f, stack), s.cases(), s.defaultTarget(), stack);
                return true;
            }
            default -> throw f.error("bytecode " + ins.opcode().name().toLowerCase());
        }
        return false;
    }

    private void translateOperator(Frame f, OperatorInstruction oi, List<SVal> stack) {
        Opcode o = oi.opcode();
        String n = o.name();
        switch (o) {
            case ARRAYLENGTH -> push(stack, Const.ofInt(memArray(f, popRef(f, stack), null).length()));
            case INEG, LNEG, FNEG, DNEG -> {
                Operand a = pop(f, stack);
                Var dst = ir.newVar(a.type(), "");
                ir.emit(new Insn.Unary(UnOp.NEG, dst, a));
                push(stack, dst);
            }
            case LCMP, FCMPL, FCMPG, DCMPL, DCMPG -> {
                Operand b = pop(f, stack);
                Operand a = pop(f, stack);
                stack.add(new Cmp(a, b, n.endsWith("G") ? 1 : -1));
            }
            case FREM, DREM -> inline(f, "io/gradsync/tasks/compiler/JavaRemainder", "remainder", o == Opcode.FREM ? "(FF)F" : "(DD)D", stack);
            default -> {
                Operand b = pop(f, stack);
                Operand a = pop(f, stack);
                BinOp op = switch (n.substring(1)) {
                    case "ADD" -> BinOp.ADD;
                    case "SUB" -> BinOp.SUB;
                    case "MUL" -> BinOp.MUL;
                    case "DIV" -> BinOp.DIV;
                    case "REM" -> BinOp.REM;
                    case "AND" -> BinOp.AND;
                    case "OR" -> BinOp.OR;
                    case "XOR" -> BinOp.XOR;
                    case "SHL" -> BinOp.SHL;
                    case "SHR" -> BinOp.SHR;
                    case "USHR" -> BinOp.USHR;
                    default -> throw f.error("operator " + n.toLowerCase());
                };
                push(stack, binary(op, a, b));
            }
        }
    }

    private void translateStack(Frame f, Opcode o, List<SVal> stack) {
        for (int d = 0; d < stack.size(); d++) {
            if (stack.get(d) instanceof Cmp) {
                stack.set(d, materialize(stack.get(d)));
            }
        }
        int n = stack.size();
        switch (o) {
            case POP -> stack.removeLast();
            case POP2 -> {
                if (isCategory2(stack.removeLast())) {
                    break;
                }
                stack.removeLast();
            }
            case DUP -> stack.add(stack.getLast());
            case SWAP -> {
                SVal a = stack.removeLast();
                SVal b = stack.removeLast();
                stack.add(a);
                stack.add(b);
            }
            case DUP_X1 -> stack.add(n - 2, stack.getLast());
            case DUP_X2 -> stack.add(isCategory2(stack.get(n - 2)) ? n - 2 : n - 3, stack.getLast());
            case DUP2 -> {
                if (isCategory2(stack.getLast())) {
                    stack.add(stack.getLast());
                } else {
                    stack.add(stack.get(n - 2));
                    stack.add(stack.get(n - 1));
                }
            }
            case DUP2_X1 -> {
                if (isCategory2(stack.getLast())) {
                    stack.add(n - 2, stack.getLast());
                } else {
                    SVal v1 = stack.get(n - 1);
                    SVal v2 = stack.get(n - 2);
                    stack.add(n - 3, v1);
                    stack.add(n - 3, v2);
                }
            }
            case DUP2_X2 -> {
                SVal v1 = stack.get(n - 1);
                if (isCategory2(v1)) {
                    int at = isCategory2(stack.get(n - 2)) ? n - 2 : n - 3;
                    stack.add(at, v1);
                } else {
                    SVal v2 = stack.get(n - 2);
                    int at = isCategory2(stack.get(n - 3)) ? n - 3 : n - 4;
                    stack.add(at, v1);
                    stack.add(at, v2);
                }
            }
            default -> throw f.error("stack operation " + o.name().toLowerCase());
        }
    }

    /** Tables read so far, by field, so that each is in the kernel once. */
    private final Map<String, MemArray> arraysBySite = new HashMap<>();
    private static final int MAX_IN_KERNEL_BYTES = 48 * 1024;

    /** The private array a {@code newarray} makes: its length must be a constant. */
    private MemArray privateArray(Frame f, TypeKind kind, Operand length) {
        if (!(length instanceof Const c)) {
            throw f.error("array allocation of a length that is not a constant (new " + kind.upperBound().displayName()
                    + "[n] needs n fixed when the kernel is compiled)");
        }
        MemArray m = inKernelArray(f, MemArray.Space.PRIVATE, descriptorOf(f, kind), c.intValue(), "new " + kind.upperBound().displayName() + "[" + c.intValue() + "]");
        ir.emit(new Insn.ArrayZero(m));
        return m;
    }

    private MemArray inKernelArray(Frame f, MemArray.Space space, char javaType, int length, String what) {
        if (length < 0 || (long) length * 8 > MAX_IN_KERNEL_BYTES) {
            throw f.error(what + ": in-kernel arrays hold 0 to " + MAX_IN_KERNEL_BYTES + " bytes");
        }
        MemArray m = f.arraysAtBci.computeIfAbsent(f.bci, k -> ir.newArray(space, javaType, length, null));
        if (m.length() != length) {
            throw f.error(what + " at one place with different constant lengths");
        }
        return m;
    }

    private static char descriptorOf(Frame f, TypeKind kind) {
        return switch (kind) {
            case BOOLEAN -> 'Z';
            case BYTE -> 'B';
            case CHAR -> 'C';
            case SHORT -> 'S';
            case INT -> 'I';
            case LONG -> 'J';
            case FLOAT -> 'F';
            case DOUBLE -> 'D';
            default -> throw f.error("array of " + kind);
        };
    }

    /** The in-kernel array a reference holds; {@code kind} (null: any) is the access's element type. */
    private static MemArray memArray(Frame f, Ref r, TypeKind kind) {
        if (!(r.target instanceof MemArray m)) {
            throw f.error(r.target instanceof ArrayParam ? "Java array access on a kernel array parameter (use get/set)"
                    : "Java array access on " + r.target);
        }
        if (kind != null) {
            char want = descriptorOf(f, kind);
            boolean ok = want == m.javaType() || (want == 'B' && m.javaType() == 'Z'); // baload/bastore serve both
            if (!ok) {
                throw f.error("access as " + kind + " to an array of " + m.javaTypeName());
            }
        }
        return m;
    }

    /**
     * A switch as a chain of compares, in case order: the device compiler turns a dense chain
     * back into a jump table where that pays.
     */
    private void translateSwitch(Frame f, Operand key, List<SwitchCase> cases, java.lang.classfile.Label defaultTarget, List<SVal> stack) {
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

    private static final Map<String, SVal> ENUM_CONSTANTS = Map.ofEntries(
            Map.entry("MemoryScope.GROUP", new Ref(Insn.Scope.GROUP)),
            Map.entry("MemoryScope.DEVICE", new Ref(Insn.Scope.DEVICE)),
            Map.entry("MemoryScope.SYSTEM", new Ref(Insn.Scope.SYSTEM)),
            Map.entry("MemoryOrder.RELAXED", new Ref(Insn.Order.RELAXED)),
            Map.entry("MemoryOrder.ACQUIRE", new Ref(Insn.Order.ACQUIRE)),
            Map.entry("MemoryOrder.RELEASE", new Ref(Insn.Order.RELEASE)),
            Map.entry("MemoryOrder.ACQ_REL", new Ref(Insn.Order.ACQ_REL)),
            Map.entry("MemoryOrder.SEQ_CST", new Ref(Insn.Order.SEQ_CST)));

    /**
     * What a {@code getstatic} reads: a primitive {@code static final} as a constant, a
     * {@code static final} primitive array as a table (its contents now), the atomics' scope and
     * order constants symbolically, and {@code $assertionsDisabled} as true (no asserts on devices).
     */
    private SVal staticValue(Frame f, FieldInstruction fi) {
        String owner = fi.owner().asInternalName();
        String name = fi.name().stringValue();
        if (name.equals("$assertionsDisabled")) {
            return new Val(Const.ofInt(1));
        }
        if (owner.startsWith(API)) {
            SVal e = ENUM_CONSTANTS.get(owner.substring(API.length()) + "." + name);
            if (e != null) {
                return e;
            }
        }
        String type = fi.typeSymbol().descriptorString();
        if (type.length() == 2 && type.charAt(0) == '[' && "ZBCSIJFD".indexOf(type.charAt(1)) >= 0) {
            String site = "table " + owner + "." + name;
            MemArray m = arraysBySite.get(site);
            if (m == null) {
                long[] table = StaticTables.read(classFor(f, owner), name, type.charAt(1));
                if (table == null) {
                    throw f.error("static array " + owner.replace('/', '.') + "." + name + " that is not final or cannot be read");
                }
                if ((long) table.length * 8 > MAX_IN_KERNEL_BYTES) {
                    throw f.error("static array " + name + " of " + table.length + " elements (tables hold up to " + MAX_IN_KERNEL_BYTES + " bytes)");
                }
                m = ir.newArray(MemArray.Space.TABLE, type.charAt(1), table.length, table);
                arraysBySite.put(site, m);
            }
            return new Ref(m);
        }
        return new Val(staticFinalConstant(f, fi));
    }

    private Const staticFinalConstant(Frame f, FieldInstruction fi) {
        String owner = fi.owner().asInternalName().replace('/', '.');
        String name = fi.name().stringValue();
        try {
            Class<?> c = Class.forName(owner, true, loaderOf(f.owner));
            Field field = c.getDeclaredField(name);
            int mods = field.getModifiers();
            if (!Modifier.isStatic(mods) || !Modifier.isFinal(mods)) {
                throw f.error("static field that is not final (" + owner + "." + name + ")");
            }
            if (!field.getType().isPrimitive()) {
                throw f.error("static final field of reference type (" + owner + "." + name + ")");
            }
            io.gradsync.tasks.internal.UserCode.open(field); // where it is not open, the read below says so
            Class<?> t = field.getType();
            if (t == float.class) {
                return Const.ofFloat(field.getFloat(null));
            } else if (t == double.class) {
                return Const.ofDouble(field.getDouble(null));
            } else if (t == long.class) {
                return Const.ofLong(field.getLong(null));
            } else if (t == boolean.class) {
                return Const.ofInt(field.getBoolean(null) ? 1 : 0);
            } else if (t == char.class) {
                return Const.ofInt(field.getChar(null));
            }
            return Const.ofInt(field.getInt(null));
        } catch (ReflectiveOperationException | RuntimeException e) {
            if (e instanceof KernelCompileException k) {
                throw k;
            }
            Const c = StaticTables.initialValue(classFor(f, fi.owner().asInternalName()), name, fi.typeSymbol().descriptorString().charAt(0));
            if (c != null) {
                return c;
            }
            throw f.error("static field " + owner + "." + name + " that cannot be read (" + e + ")");
        }
    }

    // ------------------------------------------------------------------------------------------

    private void translateInvoke(Frame f, InvokeInstruction inv, List<SVal> stack) {
        String owner = inv.owner().asInternalName();
        String name = inv.name().stringValue();
        String desc = inv.type().stringValue();
        if (intrinsic(f, inv.opcode(), owner, name, desc, stack)) {
            return;
        }
        if (inv.opcode() != Opcode.INVOKESTATIC) {
            throw f.error((inv.opcode() == Opcode.INVOKESPECIAL ? "constructor or private instance call " : "virtual call ")
                    + owner.replace('/', '.') + "." + name + desc);
        }
        inline(f, owner, name, desc, stack);
    }

    private void inline(Frame f, String owner, String name, String desc, List<SVal> stack) {
        String key = owner + "." + name + desc;
        for (Frame g : frames) {
            if ((g.owner.getName().replace('.', '/') + "." + g.methodId).equals(key)) {
                throw f.error("recursive call to " + owner.replace('/', '.') + "." + name + desc);
            }
        }
        if (frames.size() >= MAX_INLINE_DEPTH) {
            throw f.error("calls nested deeper than " + MAX_INLINE_DEPTH);
        }
        Class<?> calleeClass = classFor(f, owner);
        MethodModel callee = findMethod(calleeClass, name, desc, f);
        MethodTypeDesc type = MethodTypeDesc.ofDescriptor(desc);
        List<SVal> args = new ArrayList<>();
        for (int i = type.parameterCount() - 1; i >= 0; i--) {
            SVal v = stack.removeLast();
            args.addFirst(v instanceof Cmp ? materialize(v) : v);
        }
        String ret = type.returnType().descriptorString();
        Var result = ret.equals("V") || !type.returnType().isPrimitive() ? null : ir.newVar(irType(ret.charAt(0)), "");
        Block cont = ir.newBlock();
        Frame g = new Frame(calleeClass, callee, cont, result);
        frames.push(g);
        g.bci = -1;
        checkCallable(g, callee);
        int slot = 0;
        for (int i = 0; i < args.size(); i++) {
            SVal a = args.get(i);
            if (a instanceof Ref r) {
                g.refLocals.put(slot, r);
                slot++;
            } else {
                Operand o = op(g, a);
                if (o instanceof Const c && !g.assigned(slot)) {
                    g.constants.put(slot, c); // a constant argument the callee never reassigns: its branches on it fold
                } else {
                    ir.emit(new Insn.Move(g.local(slot, o.type()), o));
                }
                slot += o.type().isWide() ? 2 : 1;
            }
        }
        translateFrame(g);
        frames.pop();
        ir.setCurrent(cont);
        if (result != null) {
            push(stack, result);
        } else if (!ret.equals("V")) {
            if (g.returnedRef == null) {
                throw f.error("call to " + name + " returning a reference that is not a kernel array");
            }
            stack.add(g.returnedRef);
        }
    }

    private void checkCallable(Frame f, MethodModel m) {
        var flags = m.flags();
        if (!flags.has(AccessFlag.STATIC)) {
            throw f.error("instance method (kernels and the methods they call must be static)");
        }
        if (flags.has(AccessFlag.SYNCHRONIZED)) {
            throw f.error("synchronized method");
        }
    }

    /** Maps API and java.lang methods to IR; returns false when the call is not an intrinsic. */
    private boolean intrinsic(Frame f, Opcode opcode, String owner, String name, String desc, List<SVal> stack) {
        if (owner.startsWith(API) && opcode == Opcode.INVOKEVIRTUAL) {
            String cls = owner.substring(API.length());
            if (cls.equals("KernelContext")) {
                translateContextCall(f, name, desc, stack);
                return true;
            }
            if (arrayKind(ClassDesc.ofInternalName(owner)) != null || owner.equals(API + "SixteenBitFloatArray")) {
                // a helper may take the common parent of bf16 and fp16 arrays: the reference says which it is
                translateArrayCall(f, name, desc, stack);
                return true;
            }
            return false;
        }
        if (opcode != Opcode.INVOKESTATIC) {
            return false;
        }
        if (owner.equals(API + "Atomics") && desc.contains(ATOMIC_MODES)) {
            translateAtomic(f, name, desc, stack);
            return true;
        }
        if (owner.equals(API + "Atomics") && name.equals("add")) {
            checkStoreInsideParallel(f);
            Operand value = pop(f, stack);
            Operand index = pop(f, stack);
            Ref r = popRef(f, stack);
            ArrayParam ap = array(f, r);
            ir.emit(new Insn.AtomicAdd(ap, index, value));
            return true;
        }
        String sig = name + desc;
        if (owner.equals(API + "HalfFloats")) {
            UnOp op = switch (sig) {
                case "bf16ToFloat(S)F" -> UnOp.BF16_BITS_TO_F32;
                case "floatToBf16(F)S" -> UnOp.F32_TO_BF16_BITS;
                case "halfToFloat(S)F" -> UnOp.HALF_BITS_TO_F32;
                case "floatToHalf(F)S" -> UnOp.F32_TO_HALF_BITS;
                default -> null;
            };
            return op != null && unary(f, op, desc, stack);
        }
        if (owner.equals("java/lang/Float") || owner.equals("java/lang/Double")) {
            UnOp op = switch (sig) {
                case "float16ToFloat(S)F" -> UnOp.HALF_BITS_TO_F32;
                case "floatToFloat16(F)S" -> UnOp.F32_TO_HALF_BITS;
                case "floatToRawIntBits(F)I", "intBitsToFloat(I)F", "doubleToRawLongBits(D)J", "longBitsToDouble(J)D" -> UnOp.BITCAST;
                default -> null;
            };
            return op != null && unary(f, op, desc, stack);
        }
        if (owner.equals("java/lang/Math") || owner.equals("java/lang/StrictMath")) {
            switch (name) {
                case "min", "max" -> {
                    Operand b = pop(f, stack);
                    Operand a = pop(f, stack);
                    push(stack, binary(name.equals("min") ? BinOp.MIN : BinOp.MAX, a, b));
                    return true;
                }
                case "abs" -> {
                    return unary(f, UnOp.ABS, desc, stack);
                }
                case "sqrt" -> {
                    return unary(f, UnOp.SQRT, desc, stack);
                }
                case "fma" -> {
                    Operand c = pop(f, stack);
                    Operand b = pop(f, stack);
                    Operand a = pop(f, stack);
                    Var dst = ir.newVar(a.type(), "");
                    ir.emit(new Insn.Fma(dst, a, b, c));
                    push(stack, dst);
                    return true;
                }
                default -> {
                    // everything else is Java code in the JDK (StrictMath's algorithms): inlined as it is, so results are StrictMath's bits
                    return false;
                }
            }
        }
        return false;
    }

    private static final String ATOMIC_MODES = "L" + API + "MemoryScope;L" + API + "MemoryOrder;)" ;

    /**
     * {@code Atomics.getAndAdd / getAndMax / getAndMin / getAndSet / compareAndExchange / load /
     * store (array, index, [value, [expected,]] scope, order)}: the scope and order must be the
     * enum constants themselves, fixed when the kernel is compiled.
     */
    private void translateAtomic(Frame f, String name, String desc, List<SVal> stack) {
        Insn.Order order = (Insn.Order) constantRef(f, popRef(f, stack), "memory order");
        Insn.Scope scope = (Insn.Scope) constantRef(f, popRef(f, stack), "memory scope");
        Insn.AtomicOp op = switch (name) {
            case "getAndAdd" -> Insn.AtomicOp.ADD;
            case "getAndMax" -> Insn.AtomicOp.MAX;
            case "getAndMin" -> Insn.AtomicOp.MIN;
            case "getAndSet" -> Insn.AtomicOp.EXCHANGE;
            case "compareAndExchange" -> Insn.AtomicOp.COMPARE_EXCHANGE;
            case "load" -> Insn.AtomicOp.LOAD;
            case "store" -> Insn.AtomicOp.STORE;
            default -> throw f.error("Atomics." + name + desc);
        };
        if (op == Insn.AtomicOp.LOAD && (order == Insn.Order.RELEASE || order == Insn.Order.ACQ_REL)) {
            throw f.error("an atomic load that is " + order + " (RELAXED, ACQUIRE or SEQ_CST)");
        }
        if (op == Insn.AtomicOp.STORE && (order == Insn.Order.ACQUIRE || order == Insn.Order.ACQ_REL)) {
            throw f.error("an atomic store that is " + order + " (RELAXED, RELEASE or SEQ_CST)");
        }
        Operand value = null;
        Operand expected = null;
        if (op == Insn.AtomicOp.COMPARE_EXCHANGE) {
            value = pop(f, stack);
            expected = pop(f, stack);
        } else if (op != Insn.AtomicOp.LOAD) {
            value = pop(f, stack);
        }
        Operand index = pop(f, stack);
        ArrayParam ap = array(f, popRef(f, stack));
        if (op != Insn.AtomicOp.LOAD) {
            checkStoreInsideParallel(f);
        }
        Var dst = op == Insn.AtomicOp.STORE ? null : ir.newVar(ap.element().valueType(), "");
        ir.emit(new Insn.Atomic(op, dst, ap, index, value, expected, scope, order));
        if (dst != null) {
            push(stack, dst);
        }
    }

    private static Object constantRef(Frame f, Ref r, String what) {
        if (r.target instanceof Insn.Order || r.target instanceof Insn.Scope) {
            return r.target;
        }
        throw f.error(what + " that is not one of the enum's constants");
    }

    /** KernelContext's queries, group-local arrays and barriers. */
    private void translateContextCall(Frame f, String name, String desc, List<SVal> stack) {
        if (name.startsWith("allocate") && name.endsWith("LocalArray")) {
            Operand length = pop(f, stack);
            popRef(f, stack);
            if (style != null && style != KernelStyle.CONTEXT) {
                throw f.error("group-local array outside a KernelContext kernel");
            }
            if (!(length instanceof Const c)) {
                throw f.error("KernelContext." + name + " of a length that is not a constant (fixed when the kernel is compiled)");
            }
            char type = desc.charAt(desc.length() - 1);
            stack.add(new Ref(inKernelArray(f, MemArray.Space.GROUP, type, c.intValue(), "KernelContext." + name + "(" + c.intValue() + ")")));
            return;
        }
        if (name.equals("warpSum") || name.equals("warpMax")) {
            Operand value = pop(f, stack);
            popRef(f, stack);
            if (value.type() != IrType.F32 && value.type() != IrType.I32) {
                throw f.error("KernelContext." + name + " of a " + value.type() + " (float and int only)");
            }
            Var dst = ir.newVar(value.type(), "");
            ir.emit(new Insn.WarpReduce(name.equals("warpMax"), dst, value));
            push(stack, dst);
            return;
        }
        if (name.equals("localBarrier") || name.equals("globalBarrier")) {
            popRef(f, stack);
            ir.emit(new Insn.Barrier(name.equals("globalBarrier")));
            return;
        }
        int dim = 0;
        if (desc.startsWith("(I)")) {
            Operand d = pop(f, stack);
            if (!(d instanceof Const c) || c.intValue() < 0 || c.intValue() > 2) {
                throw f.error("KernelContext." + name + "(dimension) with a dimension that is not the constant 0, 1 or 2");
            }
            dim = c.intValue();
        } else if (name.matches("(global|local|group)Id[xyz]")) {
            dim = name.charAt(name.length() - 1) - 'x';
        }
        ThreadQuery q = switch (name) {
            case "globalIdx", "globalIdy", "globalIdz" -> ThreadQuery.GLOBAL_IDX;
            case "localIdx", "localIdy", "localIdz" -> ThreadQuery.LOCAL_IDX;
            case "groupIdx", "groupIdy", "groupIdz" -> ThreadQuery.GROUP_IDX;
            case "globalSize" -> ThreadQuery.GLOBAL_SIZE;
            case "localSize" -> ThreadQuery.LOCAL_SIZE;
            case "groupCount" -> ThreadQuery.GROUP_COUNT;
            default -> throw f.error("KernelContext." + name + desc + " on a device");
        };
        popRef(f, stack);
        Var dst = ir.newVar(IrType.I32, "");
        ir.emit(new Insn.Thread(q, dim, dst));
        push(stack, dst);
    }

    private boolean unary(Frame f, UnOp op, String desc, List<SVal> stack) {
        Operand a = pop(f, stack);
        IrType result = irType(desc.charAt(desc.length() - 1));
        Var dst = ir.newVar(result, "");
        ir.emit(new Insn.Unary(op, dst, a));
        push(stack, dst);
        return true;
    }

    private void translateArrayCall(Frame f, String name, String desc, List<SVal> stack) {
        switch (name) {
            case "getSize" -> {
                ArrayParam ap = array(f, popRef(f, stack));
                Var dst = ir.newVar(IrType.I32, ap.name() + "_len");
                ir.emit(new Insn.ArrayLength(dst, ap));
                push(stack, dst);
            }
            case "get", "getBits" -> {
                Operand index = pop(f, stack);
                ArrayParam ap = array(f, popRef(f, stack));
                boolean raw = name.equals("getBits");
                Var dst = ir.newVar(raw ? IrType.I32 : ap.element().valueType(), "");
                ir.emit(new Insn.Load(dst, ap, index, raw));
                push(stack, dst);
            }
            case "set", "setBits" -> {
                checkStoreInsideParallel(f);
                Operand value = pop(f, stack);
                Operand index = pop(f, stack);
                ArrayParam ap = array(f, popRef(f, stack));
                ir.emit(new Insn.Store(ap, index, value, name.equals("setBits")));
            }
            default -> throw f.error("array method " + name + desc + " on a device (supported: get, set, getBits, setBits, getSize)");
        }
    }

    private static ArrayParam array(Frame f, Ref r) {
        if (r.target instanceof ArrayParam ap) {
            return ap;
        }
        throw f.error("expected a kernel array");
    }

    // ------------------------------------------------------------------------------------------

    /** The class {@code internalName} as the code of {@code f} sees it, or the compiler's own helpers. */
    private static Class<?> classFor(Frame f, String internalName) {
        String name = internalName.replace('/', '.');
        try {
            return Class.forName(name, false, loaderOf(f.owner));
        } catch (ClassNotFoundException e) {
            try {
                return Class.forName(name, false, BytecodeTranslator.class.getClassLoader());
            } catch (ClassNotFoundException e2) {
                throw f.error("call to a class that cannot be loaded: " + internalName);
            }
        }
    }

    private static ClassLoader loaderOf(Class<?> c) {
        ClassLoader l = c.getClassLoader();
        return l != null ? l : ClassLoader.getPlatformClassLoader();
    }

    private MethodModel findMethod(Class<?> owner, String name, String desc, Frame caller) {
        ClassModel model = parse(owner, caller);
        for (MethodModel m : model.methods()) {
            if (m.methodName().equalsString(name) && m.methodType().equalsString(desc)) {
                return m;
            }
        }
        String what = "method " + owner.getName() + "." + name + desc + " not found in its class file (inherited static methods are not supported)";
        if (caller != null) {
            throw caller.error(what);
        }
        throw new KernelCompileException(owner.getName(), name + desc, -1, what, "");
    }

    private static final Map<Class<?>, ClassModel> MODELS = new java.util.concurrent.ConcurrentHashMap<>();

    private static ClassModel parse(Class<?> owner, Frame caller) {
        return MODELS.computeIfAbsent(owner, c -> {
            String resource = c.getName().substring(c.getName().lastIndexOf('.') + 1) + ".class";
            try (InputStream in = c.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new KernelCompileException(c.getName(), "?", -1, "class file not found (hidden or generated class)", "");
                }
                return ClassFile.of().parse(in.readAllBytes());
            } catch (IOException e) {
                throw new KernelCompileException(c.getName(), "?", -1, "class file unreadable: " + e, "");
            }
        });
    }

    static ElementKind arrayKind(ClassDesc d) {
        return switch (d.descriptorString()) {
            case "L" + API + "FloatArray;" -> ElementKind.F32;
            case "L" + API + "DoubleArray;" -> ElementKind.F64;
            case "L" + API + "IntArray;" -> ElementKind.I32;
            case "L" + API + "LongArray;" -> ElementKind.I64;
            case "L" + API + "HalfArray;" -> ElementKind.F16;
            case "L" + API + "Bfloat16Array;" -> ElementKind.BF16;
            default -> null;
        };
    }

    private static IrType irType(char descriptor) {
        return switch (descriptor) {
            case 'J' -> IrType.I64;
            case 'F' -> IrType.F32;
            case 'D' -> IrType.F64;
            default -> IrType.I32;
        };
    }

    private static IrType irType(TypeKind k) {
        return switch (k) {
            case LONG -> IrType.I64;
            case FLOAT -> IrType.F32;
            case DOUBLE -> IrType.F64;
            default -> IrType.I32;
        };
    }
}
