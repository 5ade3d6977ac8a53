package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.Cond;
import io.gradsync.tasks.compiler.ir.Insn.ThreadQuery;
import io.gradsync.tasks.compiler.ir.IrBuilder;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.Var;

import java.lang.classfile.Attributes;
import java.lang.classfile.MethodModel;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.util.ArrayList;
import java.util.List;

import static io.gradsync.tasks.compiler.frontend.Descriptors.API;

/**
 * Translates a static Java method's bytecode (read with {@code java.lang.classfile}) into
 * {@link KernelIr}, inlining every static call; one instance per kernel. This class maps the
 * kernel's parameters and decides its {@link KernelStyle}; the body goes through the stages of
 * this package (see its description).
 *
 * <p>How: the operand stack is simulated per basic block; every value is an IR operand, Java locals
 * are one variable per (slot, type), and values left on the stack at a block boundary (the
 * ternary operator) travel through per-depth stack variables. Kernel array parameters and the
 * {@code KernelContext} are tracked symbolically (they are never values on the device), which is
 * why a reference local may only ever hold one of them. Anything that has no meaning on a device
 * is rejected with a {@link io.gradsync.tasks.compiler.KernelCompileException} at the offending
 * instruction.
 */
public final class BytecodeTranslator {
    private final Translation t = new Translation();

    public BytecodeTranslator() {
    }

    /** Translates the static method {@code name + descriptor} of {@code owner} into a kernel. */
    public KernelIr translate(Class<?> owner, String name, String descriptor) {
        IrBuilder ir = t.ir;
        MethodModel method = t.inlining.findMethod(owner, name, descriptor, null);
        Frame frame = new Frame(t, owner, method, null, null);
        t.frames.push(frame);
        frame.bci = -1;
        Inlining.checkCallable(frame, method);
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
            ElementKind kind = Descriptors.arrayKind(p);
            if (kind != null) {
                ArrayParam ap = new ArrayParam(pname, i, kind);
                params.add(ap);
                frame.refLocals.put(slot, new Ref(ap));
                slot++;
            } else if (p.descriptorString().equals("L" + API + "KernelContext;")) {
                params.add(new KernelParam.ContextParam(pname, i));
                frame.refLocals.put(slot, new Ref(StackValue.CONTEXT));
                slot++;
            } else if (p.isPrimitive()) {
                IrType ty = Descriptors.irType(p.descriptorString().charAt(0));
                Var v = frame.local(slot, ty);
                params.add(new KernelParam.ScalarParam(pname, i, ty, v));
                slot += ty.isWide() ? 2 : 1;
            } else {
                throw frame.error("kernel parameter " + i + " of type " + p.displayName()
                        + " (kernels take FloatArray, DoubleArray, IntArray, LongArray, HalfArray, Bfloat16Array, KernelContext or primitives)");
            }
        }
        frame.parallel = t.controlFlow.findParallelLoop(frame);
        boolean hasContext = params.stream().anyMatch(p -> p instanceof KernelParam.ContextParam);
        if (frame.parallel != null && hasContext) {
            frame.bci = frame.parallel.initStoreBci();
            throw frame.error("@Parallel loop in a kernel that also takes a KernelContext (use one style)");
        }
        t.style = hasContext ? KernelStyle.CONTEXT : frame.parallel != null ? KernelStyle.PARALLEL_LOOP : KernelStyle.SERIAL;
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
        t.controlFlow.translateFrame(frame);
        t.frames.pop();
        String source = owner.getName() + "." + frame.methodId;
        return ir.finish(sanitize(name), source, params, entry);
    }

    /** The style of the kernel last translated. */
    public KernelStyle style() {
        return t.style;
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
}
