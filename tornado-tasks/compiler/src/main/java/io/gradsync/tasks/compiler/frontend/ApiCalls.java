package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.frontend.StackValue.Val;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.ThreadQuery;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.lang.classfile.TypeKind;
import java.lang.classfile.instruction.FieldInstruction;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.gradsync.tasks.compiler.frontend.Descriptors.API;

/**
 * The kernel API and what a kernel may read: {@code KernelContext} queries, group-local arrays,
 * barriers and warp reductions; get, set and getSize on kernel arrays; in-kernel arrays (private
 * {@code new T[n]}, group-local, static final tables) and their accesses; and static fields,
 * read when the kernel is compiled.
 */
final class ApiCalls extends Stage {
    private static final int MAX_IN_KERNEL_BYTES = 48 * 1024;

    private static final Map<String, StackValue> ENUM_CONSTANTS = Map.ofEntries(
            Map.entry("MemoryScope.GROUP", new Ref(Insn.Scope.GROUP)),
            Map.entry("MemoryScope.DEVICE", new Ref(Insn.Scope.DEVICE)),
            Map.entry("MemoryScope.SYSTEM", new Ref(Insn.Scope.SYSTEM)),
            Map.entry("MemoryOrder.RELAXED", new Ref(Insn.Order.RELAXED)),
            Map.entry("MemoryOrder.ACQUIRE", new Ref(Insn.Order.ACQUIRE)),
            Map.entry("MemoryOrder.RELEASE", new Ref(Insn.Order.RELEASE)),
            Map.entry("MemoryOrder.ACQ_REL", new Ref(Insn.Order.ACQ_REL)),
            Map.entry("MemoryOrder.SEQ_CST", new Ref(Insn.Order.SEQ_CST)));

    /** Tables read so far, by field, so that each is in the kernel once. */
    private final Map<String, MemArray> arraysBySite = new HashMap<>();

    ApiCalls(Translation t) {
        super(t);
    }

    /** KernelContext's queries, group-local arrays and barriers. */
    void translateContextCall(Frame f, String name, String desc, List<StackValue> stack) {
        if (name.startsWith("allocate") && name.endsWith("LocalArray")) {
            Operand length = pop(f, stack);
            popRef(f, stack);
            if (t.style != null && t.style != KernelStyle.CONTEXT) {
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

    /** get, set, getBits, setBits and getSize on a kernel array parameter. */
    void translateArrayCall(Frame f, String name, String desc, List<StackValue> stack) {
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
                t.controlFlow.checkStoreInsideParallel(f);
                Operand value = pop(f, stack);
                Operand index = pop(f, stack);
                ArrayParam ap = array(f, popRef(f, stack));
                ir.emit(new Insn.Store(ap, index, value, name.equals("setBits")));
            }
            default -> throw f.error("array method " + name + desc + " on a device (supported: get, set, getBits, setBits, getSize)");
        }
    }

    /** The kernel array parameter a reference holds. */
    static ArrayParam array(Frame f, Ref r) {
        if (r.target() instanceof ArrayParam ap) {
            return ap;
        }
        throw f.error("expected a kernel array");
    }

    /** The private array a {@code newarray} makes: its length must be a constant. */
    MemArray privateArray(Frame f, TypeKind kind, Operand length) {
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
    static MemArray memArray(Frame f, Ref r, TypeKind kind) {
        if (!(r.target() instanceof MemArray m)) {
            throw f.error(r.target() instanceof ArrayParam ? "Java array access on a kernel array parameter (use get/set)"
                    : "Java array access on " + r.target());
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
     * What a {@code getstatic} reads: a primitive {@code static final} as a constant, a
     * {@code static final} primitive array as a table (its contents now), the atomics' scope and
     * order constants symbolically, and {@code $assertionsDisabled} as true (no asserts on devices).
     */
    StackValue staticValue(Frame f, FieldInstruction fi) {
        String owner = fi.owner().asInternalName();
        String name = fi.name().stringValue();
        if (name.equals("$assertionsDisabled")) {
            return new Val(Const.ofInt(1));
        }
        if (owner.startsWith(API)) {
            StackValue e = ENUM_CONSTANTS.get(owner.substring(API.length()) + "." + name);
            if (e != null) {
                return e;
            }
        }
        String type = fi.typeSymbol().descriptorString();
        if (type.length() == 2 && type.charAt(0) == '[' && "ZBCSIJFD".indexOf(type.charAt(1)) >= 0) {
            String site = "table " + owner + "." + name;
            MemArray m = arraysBySite.get(site);
            if (m == null) {
                long[] table = StaticTables.read(Inlining.classFor(f, owner), name, type.charAt(1));
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

    private static Const staticFinalConstant(Frame f, FieldInstruction fi) {
        String owner = fi.owner().asInternalName().replace('/', '.');
        String name = fi.name().stringValue();
        try {
            Class<?> c = Class.forName(owner, true, Inlining.loaderOf(f.owner));
            Field field = c.getDeclaredField(name);
            int mods = field.getModifiers();
            if (!Modifier.isStatic(mods) || !Modifier.isFinal(mods)) {
                throw f.error("static field that is not final (" + owner + "." + name + ")");
            }
            if (!field.getType().isPrimitive()) {
                throw f.error("static final field of reference type (" + owner + "." + name + ")");
            }
            io.gradsync.tasks.internal.UserCode.open(field); // where it is not open, the read below says so
            Class<?> ty = field.getType();
            if (ty == float.class) {
                return Const.ofFloat(field.getFloat(null));
            } else if (ty == double.class) {
                return Const.ofDouble(field.getDouble(null));
            } else if (ty == long.class) {
                return Const.ofLong(field.getLong(null));
            } else if (ty == boolean.class) {
                return Const.ofInt(field.getBoolean(null) ? 1 : 0);
            } else if (ty == char.class) {
                return Const.ofInt(field.getChar(null));
            }
            return Const.ofInt(field.getInt(null));
        } catch (ReflectiveOperationException | RuntimeException e) {
            if (e instanceof KernelCompileException k) {
                throw k;
            }
            Const c = StaticTables.initialValue(Inlining.classFor(f, fi.owner().asInternalName()), name, fi.typeSymbol().descriptorString().charAt(0));
            if (c != null) {
                return c;
            }
            throw f.error("static field " + owner + "." + name + " that cannot be read (" + e + ")");
        }
    }
}
