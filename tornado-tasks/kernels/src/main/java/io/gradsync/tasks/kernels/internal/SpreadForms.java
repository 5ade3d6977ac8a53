package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.internal.UserCode;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeModel;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.Instruction;
import java.lang.classfile.Label;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeAnnotation;
import java.lang.classfile.TypeKind;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.instruction.BranchInstruction;
import java.lang.classfile.instruction.ConstantInstruction;
import java.lang.classfile.instruction.ExceptionCatch;
import java.lang.classfile.instruction.FieldInstruction;
import java.lang.classfile.instruction.IncrementInstruction;
import java.lang.classfile.instruction.InvokeDynamicInstruction;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.LabelTarget;
import java.lang.classfile.instruction.LineNumber;
import java.lang.classfile.instruction.LoadInstruction;
import java.lang.classfile.instruction.OperatorInstruction;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.classfile.instruction.StoreInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.ConstantDesc;
import java.lang.constant.DirectMethodHandleDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The forms in which a JVM device spreads a kernel over its cores, generated from the kernel's
 * bytecode ({@code java.lang.classfile}) as a class of the kernel's package, defined beside it:
 * <ul>
 *   <li>a {@code @Parallel}-loop kernel's <b>chunk form</b>: the method as written, with two int
 *       parameters more, {@code from} and {@code to}, whose loop runs only its iterations
 *       {@code init + from} to {@code init + to - 1} (still stopping where its own condition says)
 *       and which returns 1 where the loop went on to {@code init + to}, 0 where it ended first;</li>
 *   <li>a {@code KernelContext} kernel's <b>row form</b>: {@code (args..., from, to, y, z)}, a loop
 *       that moves the context to {@code (x, y, z)} and calls the kernel, for {@code x} from
 *       {@code from} to {@code to - 1}.</li>
 * </ul>
 * Both keep the kernel's code where C2 compiles it with the arrays it loops over, as it compiles
 * the kernel run once. The compiler has checked a {@code @Parallel} loop's shape (one exit, a step
 * of one, no stores outside it), which is what lets chunks of it run apart. The private static
 * methods of the kernel's class that it calls (and a private kernel) are copied beside it; a kernel
 * that reaches any other private or protected member (a class of the same package reaches neither)
 * has no form: the caller runs it as before.
 *
 * <p>Thread-safety: stateless; the forms it returns are safe to call from several threads.
 */
final class SpreadForms {
    private static final ClassDesc PARALLEL = ClassDesc.of(Parallel.class.getName());
    private static final ClassDesc CONTEXT = ClassDesc.of(KernelContext.class.getName());
    private static final ClassDesc MATH = ClassDesc.of(Math.class.getName());
    private static final AtomicInteger NAMES = new AtomicInteger();

    private SpreadForms() {
    }

    /**
     * The chunk form of {@code kernel}, a {@code @Parallel}-loop kernel the compiler accepted, typed
     * {@code (params..., int from, int to) int}; null where it cannot have one.
     */
    static MethodHandle chunks(Method kernel) {
        Class<?> owner = kernel.getDeclaringClass();
        if (kernel.getReturnType() != void.class) {
            return null;
        }
        try {
            Beside beside = Beside.of(kernel, "chunk");
            if (beside == null) {
                return null;
            }
            CodeAttribute code = beside.kernelCode();
            Loop loop = Loop.find(code);
            if (loop == null) {
                return null;
            }
            int paramSlots = 0;
            for (Class<?> p : kernel.getParameterTypes()) {
                paramSlots += p == long.class || p == double.class ? 2 : 1;
            }
            MethodType type = MethodType.methodType(int.class, kernel.getParameterTypes()).appendParameterTypes(int.class, int.class);
            ChunkTransform chunk = new ChunkTransform(loop, paramSlots, code.maxLocals() + 2, beside);
            return beside.define(type, mb -> mb.transformCode(code, chunk));
        } catch (IllegalAccessException | IllegalArgumentException | LinkageError | IOException | UnsupportedOperationException e) {
            return null; // run once, as written
        }
    }

    /**
     * The row form of {@code kernel}, a KernelContext kernel, typed {@code (params..., int from,
     * int to, int y, int z) void}; null where it cannot have one.
     */
    static MethodHandle rows(Method kernel) {
        Class<?>[] params = kernel.getParameterTypes();
        MethodType type = MethodType.methodType(void.class, params).appendParameterTypes(int.class, int.class, int.class, int.class);
        int[] slot = new int[params.length + 5];
        for (int i = 0; i < params.length + 4; i++) {
            Class<?> p = i < params.length ? params[i] : int.class;
            slot[i + 1] = slot[i] + (p == long.class || p == double.class ? 2 : 1);
        }
        int ctx = -1;
        for (int i = 0; i < params.length; i++) {
            if (params[i] == KernelContext.class) {
                ctx = i;
            }
        }
        if (ctx < 0 || kernel.getReturnType() != void.class) {
            return null;
        }
        int from = slot[params.length];
        int x = slot[params.length + 4];
        int context = slot[ctx];
        MethodTypeDesc kernelType = MethodTypeDesc.ofDescriptor(MethodType.methodType(void.class, params).toMethodDescriptorString());
        try {
            Beside beside = Beside.of(kernel, "rows");
            if (beside == null) {
                return null;
            }
            return beside.define(type, mb -> mb.withCode(b -> {
                Label head = b.newLabel();
                Label end = b.newLabel();
                b.iload(from).iconst_0().invokestatic(MATH, "max", MethodTypeDesc.ofDescriptor("(II)I")).istore(x);
                b.labelBinding(head);
                b.iload(x).iload(from + 1).if_icmpge(end);
                b.aload(context).iload(x).iload(from + 2).iload(from + 3)
                        .invokevirtual(CONTEXT, "moveTo", MethodTypeDesc.of(CONTEXT, ConstantDescs.CD_int, ConstantDescs.CD_int, ConstantDescs.CD_int))
                        .pop();
                for (int i = 0; i < params.length; i++) {
                    b.loadLocal(TypeKind.from(params[i]), slot[i]);
                }
                beside.invokeKernel(b, kernel.getName(), kernelType);
                b.iinc(x, 1).goto_(head);
                b.labelBinding(end);
                b.return_();
            }));
        } catch (IllegalAccessException | IllegalArgumentException | LinkageError | IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /**
     * The class to be defined beside a kernel's: its name, the kernel's class file, and the
     * kernel's class's private static methods that it calls (the kernel itself where it is private),
     * which a class beside it cannot call, copied into it.
     */
    private static final class Beside {
        private final Class<?> owner;
        private final ClassDesc ownerDesc;
        private final ClassDesc self;
        private final String formName;
        private final CodeAttribute kernelCode;
        private final Map<String, MethodModel> copied;

        private Beside(Class<?> owner, String formName, CodeAttribute kernelCode, Map<String, MethodModel> copied) {
            this.owner = owner;
            this.ownerDesc = ClassDesc.of(owner.getName());
            this.self = ClassDesc.of(owner.getName() + "$gradsync$" + formName + NAMES.incrementAndGet());
            this.formName = formName;
            this.kernelCode = kernelCode;
            this.copied = copied;
        }

        /** Null where the kernel's class file cannot be read or its code reaches what a class beside it cannot. */
        static Beside of(Method kernel, String formName) throws IOException {
            Class<?> owner = kernel.getDeclaringClass();
            ClassModel model = modelOf(owner);
            if (model == null) {
                return null;
            }
            MethodModel km = find(model, kernel.getName(), MethodType.methodType(kernel.getReturnType(), kernel.getParameterTypes()).toMethodDescriptorString());
            if (km == null || km.code().isEmpty()) {
                return null;
            }
            Map<String, MethodModel> copied = new LinkedHashMap<>();
            List<MethodModel> scan = new ArrayList<>(List.of(km));
            if (Modifier.isPrivate(kernel.getModifiers())) {
                copied.put(key(km.methodName().stringValue(), km.methodType().stringValue()), km);
            }
            ClassDesc ownerDesc = ClassDesc.of(owner.getName());
            for (int k = 0; k < scan.size(); k++) {
                for (CodeElement e : scan.get(k).code().orElseThrow()) {
                    if (e instanceof InvokeInstruction i && i.opcode() == Opcode.INVOKESTATIC && i.owner().asSymbol().equals(ownerDesc)) {
                        String key = key(i.name().stringValue(), i.type().stringValue());
                        MethodModel callee = find(model, i.name().stringValue(), i.type().stringValue());
                        if (callee != null && callee.flags().has(java.lang.reflect.AccessFlag.PRIVATE) && callee.code().isPresent()
                                && copied.putIfAbsent(key, callee) == null) {
                            scan.add(callee);
                        }
                    }
                }
            }
            for (MethodModel m : scan) {
                if (!reachesOnlyWhatItsPackageReaches(owner, m.code().orElseThrow(), copied.keySet())) {
                    return null;
                }
            }
            return new Beside(owner, formName, (CodeAttribute) km.code().orElseThrow(), copied);
        }

        CodeAttribute kernelCode() {
            return kernelCode;
        }

        /** Emits {@code i}, a call to a copied method aimed at the copy. */
        void emit(CodeBuilder b, Instruction ins) {
            if (ins instanceof InvokeInstruction i && i.opcode() == Opcode.INVOKESTATIC && i.owner().asSymbol().equals(ownerDesc)
                    && copied.containsKey(key(i.name().stringValue(), i.type().stringValue()))) {
                b.invokestatic(self, i.name().stringValue(), i.typeSymbol());
            } else {
                b.with(ins);
            }
        }

        /** A call to the kernel, or to its copy where it is private. */
        void invokeKernel(CodeBuilder b, String name, MethodTypeDesc type) {
            if (copied.containsKey(key(name, type.descriptorString()))) {
                b.invokestatic(self, name, type);
            } else {
                b.invokestatic(ownerDesc, name, type, owner.isInterface());
            }
        }

        /** Defines the class: the form's method ({@code body}) and the copies; returns the form. */
        MethodHandle define(MethodType type, java.util.function.Consumer<java.lang.classfile.MethodBuilder> body) throws IllegalAccessException {
            ClassLoader loader = owner.getClassLoader() != null ? owner.getClassLoader() : ClassLoader.getSystemClassLoader();
            ClassHierarchyResolver resolver = ClassHierarchyResolver.defaultResolver()
                    .orElse(ClassHierarchyResolver.ofResourceParsing(loader))
                    .orElse(ClassHierarchyResolver.ofClassLoading(loader));
            MethodTypeDesc desc = MethodTypeDesc.ofDescriptor(type.toMethodDescriptorString());
            byte[] bytes = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver)).build(self, cb -> {
                cb.withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC);
                cb.withMethod(formName, desc, ClassFile.ACC_STATIC | ClassFile.ACC_SYNTHETIC, body);
                for (MethodModel m : copied.values()) {
                    cb.withMethod(m.methodName(), m.methodType(), ClassFile.ACC_PRIVATE | ClassFile.ACC_STATIC | ClassFile.ACC_SYNTHETIC,
                            mb -> mb.transformCode(m.code().orElseThrow(), (b, e) -> {
                                if (e instanceof Instruction ins) {
                                    emit(b, ins);
                                } else {
                                    b.with(e);
                                }
                            }));
                }
            });
            MethodHandles.Lookup defined = UserCode.defineBeside(owner, bytes);
            try {
                return defined.findStatic(defined.lookupClass(), formName, type);
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException(e); // it was just generated
            }
        }

        private static String key(String name, String descriptor) {
            return name + descriptor;
        }

        private static MethodModel find(ClassModel model, String name, String descriptor) {
            for (MethodModel m : model.methods()) {
                if (m.methodName().equalsString(name) && m.methodType().equalsString(descriptor)) {
                    return m;
                }
            }
            return null;
        }

        private static ClassModel modelOf(Class<?> owner) throws IOException {
            String resource = owner.getName().substring(owner.getName().lastIndexOf('.') + 1) + ".class";
            try (InputStream in = owner.getResourceAsStream(resource)) {
                return in == null ? null : ClassFile.of().parse(in.readAllBytes());
            }
        }
    }

    /**
     * True where every field and method that {@code code} names is one that a class of
     * {@code owner}'s package (but not of its nest, nor a subclass) may use as the kernel does,
     * or a method {@code copied} beside it.
     */
    private static boolean reachesOnlyWhatItsPackageReaches(Class<?> owner, CodeModel code, java.util.Set<String> copied) {
        ClassDesc ownerDesc = ClassDesc.of(owner.getName());
        for (CodeElement e : code) {
            boolean ok = switch (e) {
                case FieldInstruction f -> reachable(owner, f.owner().asSymbol(), f.name().stringValue(), null);
                case InvokeInstruction i when i.owner().asSymbol().equals(ownerDesc)
                        && copied.contains(i.name().stringValue() + i.type().stringValue()) -> true;
                case InvokeInstruction i -> reachable(owner, i.owner().asSymbol(), i.name().stringValue(), i.typeSymbol());
                case InvokeDynamicInstruction d -> handle(owner, d.bootstrapMethod()) && d.bootstrapArgs().stream()
                        .allMatch(a -> !(a instanceof DirectMethodHandleDesc h) || handle(owner, h));
                case ConstantInstruction c -> !(c.constantValue() instanceof DirectMethodHandleDesc h) || handle(owner, h);
                default -> true;
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static boolean handle(Class<?> owner, DirectMethodHandleDesc h) {
        boolean field = switch (h.kind()) {
            case GETTER, SETTER, STATIC_GETTER, STATIC_SETTER -> true;
            default -> false;
        };
        return reachable(owner, h.owner(), h.methodName(), field ? null : h.invocationType());
    }

    /** {@code type}: a method's, or null for a field. Looked up as the JVM resolves it: the class, then its supertypes. */
    private static boolean reachable(Class<?> owner, ClassDesc in, String name, MethodTypeDesc type) {
        if (in.isArray()) {
            return true; // clone() and Object's methods
        }
        Class<?> c;
        try {
            c = Class.forName(binaryName(in), false, owner.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
        List<Class<?>> search = new ArrayList<>();
        for (Class<?> s = c; s != null; s = s.getSuperclass()) {
            search.add(s);
        }
        for (int i = 0; i < search.size(); i++) {
            for (Class<?> itf : search.get(i).getInterfaces()) {
                if (!search.contains(itf)) {
                    search.add(itf);
                }
            }
        }
        for (Class<?> s : search) {
            Member m = member(s, name, type);
            if (m != null) {
                int mod = m.getModifiers();
                return !Modifier.isPrivate(mod) && !(Modifier.isProtected(mod) && !s.getPackageName().equals(owner.getPackageName()));
            }
        }
        return false;
    }

    private static Member member(Class<?> c, String name, MethodTypeDesc type) {
        if (type == null) {
            for (Field f : c.getDeclaredFields()) {
                if (f.getName().equals(name)) {
                    return f;
                }
            }
            return null;
        }
        String descriptor = type.descriptorString();
        List<Executable> all = new ArrayList<>(List.of(c.getDeclaredMethods()));
        all.addAll(List.of(c.getDeclaredConstructors()));
        for (Executable x : all) {
            String n = x instanceof Method ? x.getName() : "<init>";
            Class<?> ret = x instanceof Method m ? m.getReturnType() : void.class;
            if (n.equals(name) && MethodType.methodType(ret, x.getParameterTypes()).toMethodDescriptorString().equals(descriptor)) {
                return x;
            }
        }
        return null;
    }

    private static String binaryName(ClassDesc d) {
        String desc = d.descriptorString(); // Lpkg/Name;
        return desc.substring(1, desc.length() - 1).replace('/', '.');
    }

    /**
     * The {@code @Parallel} loop as the chunk form needs it: its counter's slot, its first
     * instruction (after the counter's initial store), its step, its exit branch, and whether
     * that exit is the plain {@code i < bound} (or {@code <=}) test that javac puts first, whose
     * bound the chunk form can lower, so that C2 still sees a loop with one exit.
     */
    private record Loop(int slot, int startBci, int stepBci, int exitBci, boolean plainTest) {
        static Loop find(CodeAttribute code) {
            var attr = code.findAttribute(Attributes.runtimeVisibleTypeAnnotations());
            if (attr.isEmpty()) {
                return null;
            }
            Loop found = null;
            for (TypeAnnotation ta : attr.get().annotations()) {
                if (ta.annotation().classSymbol().equals(PARALLEL) && ta.targetInfo() instanceof TypeAnnotation.LocalVarTarget target) {
                    for (TypeAnnotation.LocalVarTargetInfo info : target.table()) {
                        if (found != null) {
                            return null; // the compiler allows one
                        }
                        found = of(code, info.index(), code.labelToBci(info.startLabel()), code.labelToBci(info.endLabel()));
                        if (found == null) {
                            return null;
                        }
                    }
                }
            }
            return found;
        }

        private static Loop of(CodeAttribute code, int slot, int from, int to) {
            List<Instruction> inLoop = new ArrayList<>();
            int bci = 0;
            int step = -1;
            int exitBci = -1;
            BranchInstruction exit = null;
            boolean stored = false;
            for (CodeElement e : code) {
                if (e instanceof Instruction ins) {
                    if (bci + ins.sizeInBytes() == from && ins instanceof StoreInstruction st && st.slot() == slot) {
                        stored = true;
                    }
                    if (bci >= from && bci < to) {
                        inLoop.add(ins);
                        if (ins instanceof IncrementInstruction inc && inc.slot() == slot) {
                            step = inc.constant() == 1 ? bci : -2;
                        } else if (ins instanceof BranchInstruction br) {
                            int target = code.labelToBci(br.target());
                            if (target < from || target >= to) {
                                exit = br;
                                exitBci = bci;
                            }
                        }
                    }
                    bci += ins.sizeInBytes();
                }
            }
            if (!stored || step < 0 || exit == null) {
                return null;
            }
            return new Loop(slot, from, step, exitBci, plainTest(inLoop, slot, exit));
        }

        /**
         * True where the loop begins {@code iload i; <bound>; if_icmpge exit} (or {@code if_icmpgt}),
         * {@code <bound>} being instructions that push one int without consuming {@code i}.
         */
        private static boolean plainTest(List<Instruction> inLoop, int slot, BranchInstruction exit) {
            if (exit.opcode() != Opcode.IF_ICMPGE && exit.opcode() != Opcode.IF_ICMPGT || inLoop.isEmpty()
                    || !(inLoop.get(0) instanceof LoadInstruction first) || first.slot() != slot || first.typeKind() != TypeKind.INT) {
                return false;
            }
            int depth = 1;
            for (int k = 1; k < inLoop.size(); k++) {
                Instruction ins = inLoop.get(k);
                if (ins == exit) { // the same instance: one pass over the code
                    return depth == 2;
                }
                int[] effect = stackEffect(ins);
                if (effect == null || depth - effect[0] < 1) {
                    return false;
                }
                depth += effect[1] - effect[0];
            }
            return false;
        }

        /** {popped, pushed} in stack slots for the instructions a loop bound is made of; null for any other. */
        private static int[] stackEffect(Instruction ins) {
            return switch (ins) {
                case LoadInstruction l -> new int[] {0, l.typeKind().slotSize()};
                case ConstantInstruction c -> new int[] {0, c.typeKind().slotSize()};
                case FieldInstruction f -> switch (f.opcode()) {
                    case GETSTATIC -> new int[] {0, TypeKind.from(f.typeSymbol()).slotSize()};
                    case GETFIELD -> new int[] {1, TypeKind.from(f.typeSymbol()).slotSize()};
                    default -> null;
                };
                case InvokeInstruction i -> {
                    if (i.opcode() == Opcode.INVOKESPECIAL) {
                        yield null;
                    }
                    int args = i.opcode() == Opcode.INVOKESTATIC ? 0 : 1;
                    for (ClassDesc p : i.typeSymbol().parameterList()) {
                        args += TypeKind.from(p).slotSize();
                    }
                    yield new int[] {args, TypeKind.from(i.typeSymbol().returnType()).slotSize()};
                }
                case OperatorInstruction o -> switch (o.opcode()) {
                    case IADD, ISUB, IMUL, IDIV, IREM, ISHL, ISHR, IUSHR, IAND, IOR, IXOR -> new int[] {2, 1};
                    case INEG -> new int[] {1, 1};
                    case ARRAYLENGTH -> new int[] {1, 1};
                    default -> null;
                };
                default -> null;
            };
        }
    }

    /**
     * Rewrites the kernel into its chunk form: parameters {@code from} and {@code to} after the
     * kernel's own (its other locals two slots further), the counter started at
     * {@code init + from} and stopped at {@code limit = init + to} (saturated), every
     * {@code return} a {@code return 0}, and where the loop stops at {@code limit} a {@code return 1}.
     */
    private static final class ChunkTransform implements CodeTransform {
        private final Loop loop;
        private final int params;
        private final int limit;
        private final Beside beside;
        private int bci;
        private Label loopEnded;
        private Label chunkDone;
        private Label reachedLimit;

        ChunkTransform(Loop loop, int params, int limit, Beside beside) {
            this.loop = loop;
            this.params = params;
            this.limit = limit;
            this.beside = beside;
        }

        private int shift(int slot) {
            return slot < params ? slot : slot + 2;
        }

        @Override
        public void accept(CodeBuilder b, CodeElement e) {
            if (chunkDone == null) {
                chunkDone = b.newLabel();
                reachedLimit = b.newLabel();
            }
            if (e instanceof Instruction ins) {
                int at = bci;
                bci += ins.sizeInBytes();
                instruction(b, ins, at);
            } else if (e instanceof LabelTarget || e instanceof ExceptionCatch || e instanceof LineNumber) {
                b.with(e);
            }
            // local variable tables and type annotations name the old slots; stack maps are computed anew
        }

        private void instruction(CodeBuilder b, Instruction ins, int at) {
            int i = shift(loop.slot());
            switch (ins) {
                case StoreInstruction s when at + s.sizeInBytes() == loop.startBci() && s.slot() == loop.slot() -> {
                    // the counter's initial store: limit = min(init + to, MAX), i = min(init + from, MAX)
                    b.storeLocal(s.typeKind(), i);
                    b.iload(i).i2l().iload(params + 1).i2l().ladd().ldc((ConstantDesc) (long) Integer.MAX_VALUE)
                            .invokestatic(MATH, "min", MethodTypeDesc.ofDescriptor("(JJ)J")).l2i().istore(limit);
                    // from is never negative, but C2 keeps a counter it cannot prove non-negative out of its vectorized loop
                    b.iload(i).i2l().iload(params).iconst_0().invokestatic(MATH, "max", MethodTypeDesc.ofDescriptor("(II)I"))
                            .i2l().ladd().ldc((ConstantDesc) (long) Integer.MAX_VALUE)
                            .invokestatic(MATH, "min", MethodTypeDesc.ofDescriptor("(JJ)J")).l2i().istore(i);
                }
                case BranchInstruction br when at == loop.exitBci() && loop.plainTest() -> {
                    // i >= min(bound, limit), or i > min(bound, limit - 1): one exit; which it was is told after it
                    loopEnded = br.target();
                    b.iload(limit);
                    if (br.opcode() == Opcode.IF_ICMPGT) {
                        b.iconst_1().isub();
                    }
                    b.invokestatic(MATH, "min", MethodTypeDesc.ofDescriptor("(II)I"));
                    b.branch(br.opcode(), reachedLimit);
                }
                case IncrementInstruction inc when at == loop.stepBci() && !loop.plainTest() -> {
                    b.iinc(i, 1);
                    b.iload(i).iload(limit).if_icmpge(chunkDone);
                }
                case LoadInstruction l -> b.loadLocal(l.typeKind(), shift(l.slot()));
                case StoreInstruction s -> b.storeLocal(s.typeKind(), shift(s.slot()));
                case IncrementInstruction inc -> b.iinc(shift(inc.slot()), inc.constant());
                case ReturnInstruction r -> b.iconst_0().ireturn();
                default -> {
                    if (ins.opcode() == Opcode.RET || ins.opcode() == Opcode.RET_W) {
                        throw new UnsupportedOperationException("ret");
                    }
                    beside.emit(b, ins);
                }
            }
        }

        @Override
        public void atEnd(CodeBuilder b) {
            if (loopEnded != null) {
                // the loop's own test or the chunk's limit: below the limit, the loop's test ended it
                b.labelBinding(reachedLimit);
                b.iload(shift(loop.slot())).iload(limit).if_icmplt(loopEnded);
            }
            b.labelBinding(chunkDone);
            b.iconst_1().ireturn();
        }
    }
}
