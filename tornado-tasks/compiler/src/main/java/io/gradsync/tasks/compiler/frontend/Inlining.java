package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.frontend.StackValue.Cmp;
import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.constant.MethodTypeDesc;
import java.lang.reflect.AccessFlag;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static io.gradsync.tasks.compiler.frontend.Descriptors.irType;

/**
 * Inlining: every call that is not an intrinsic is a static method translated in place, in a new
 * {@link Frame} whose returns jump to the caller's continuation. Finds the callee's class as the
 * caller's code sees it, and its method in the parsed class file.
 */
final class Inlining extends Stage {
    private static final int MAX_INLINE_DEPTH = 32;
    /** Parsed class files, shared by all translations: a loaded class's bytes do not change. */
    private static final Map<Class<?>, ClassModel> MODELS = new ConcurrentHashMap<>();

    Inlining(Translation t) {
        super(t);
    }

    void translateInvoke(Frame f, InvokeInstruction inv, List<StackValue> stack) {
        String owner = inv.owner().asInternalName();
        String name = inv.name().stringValue();
        String desc = inv.type().stringValue();
        if (t.intrinsics.intrinsic(f, inv.opcode(), owner, name, desc, stack)) {
            return;
        }
        if (inv.opcode() != Opcode.INVOKESTATIC) {
            throw f.error((inv.opcode() == Opcode.INVOKESPECIAL ? "constructor or private instance call " : "virtual call ")
                    + owner.replace('/', '.') + "." + name + desc);
        }
        inline(f, owner, name, desc, stack);
    }

    /** Translates the static method {@code owner.name desc} in place, its arguments taken from {@code stack}, its result pushed. */
    void inline(Frame f, String owner, String name, String desc, List<StackValue> stack) {
        String key = owner + "." + name + desc;
        for (Frame g : t.frames) {
            if ((g.owner.getName().replace('.', '/') + "." + g.methodId).equals(key)) {
                throw f.error("recursive call to " + owner.replace('/', '.') + "." + name + desc);
            }
        }
        if (t.frames.size() >= MAX_INLINE_DEPTH) {
            throw f.error("calls nested deeper than " + MAX_INLINE_DEPTH);
        }
        Class<?> calleeClass = classFor(f, owner);
        MethodModel callee = findMethod(calleeClass, name, desc, f);
        MethodTypeDesc type = MethodTypeDesc.ofDescriptor(desc);
        List<StackValue> args = new ArrayList<>();
        for (int i = type.parameterCount() - 1; i >= 0; i--) {
            StackValue v = stack.removeLast();
            args.addFirst(v instanceof Cmp ? materialize(v) : v);
        }
        String ret = type.returnType().descriptorString();
        Var result = ret.equals("V") || !type.returnType().isPrimitive() ? null : ir.newVar(irType(ret.charAt(0)), "");
        Block cont = ir.newBlock();
        Frame g = new Frame(t, calleeClass, callee, cont, result);
        t.frames.push(g);
        g.bci = -1;
        checkCallable(g, callee);
        int slot = 0;
        for (int i = 0; i < args.size(); i++) {
            StackValue a = args.get(i);
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
        t.controlFlow.translateFrame(g);
        t.frames.pop();
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

    static void checkCallable(Frame f, MethodModel m) {
        var flags = m.flags();
        if (!flags.has(AccessFlag.STATIC)) {
            throw f.error("instance method (kernels and the methods they call must be static)");
        }
        if (flags.has(AccessFlag.SYNCHRONIZED)) {
            throw f.error("synchronized method");
        }
    }

    /** The class {@code internalName} as the code of {@code f} sees it, or the compiler's own helpers. */
    static Class<?> classFor(Frame f, String internalName) {
        String name = internalName.replace('/', '.');
        try {
            return Class.forName(name, false, loaderOf(f.owner));
        } catch (ClassNotFoundException e) {
            try {
                return Class.forName(name, false, Inlining.class.getClassLoader());
            } catch (ClassNotFoundException e2) {
                throw f.error("call to a class that cannot be loaded: " + internalName);
            }
        }
    }

    static ClassLoader loaderOf(Class<?> c) {
        ClassLoader l = c.getClassLoader();
        return l != null ? l : ClassLoader.getPlatformClassLoader();
    }

    /** The method {@code name desc} declared in {@code owner}; {@code caller} (null for the kernel itself) names the error. */
    MethodModel findMethod(Class<?> owner, String name, String desc, Frame caller) {
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
}
