package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.ir.Const;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.CodeElement;
import java.lang.classfile.MethodModel;
import java.lang.classfile.instruction.ArrayStoreInstruction;
import java.lang.classfile.instruction.ConstantInstruction;
import java.lang.classfile.instruction.FieldInstruction;
import java.lang.classfile.instruction.NewPrimitiveArrayInstruction;
import java.lang.classfile.instruction.StackInstruction;
import java.lang.classfile.Opcode;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The values of {@code static final} fields a kernel reads, taken when it is compiled: by
 * reflection where the field is accessible, else (fields of the JDK's own classes, such as the
 * tables of {@code StrictMath}'s algorithms) by following the class initializer's constant
 * stores, the only code that sets such a field. Only the plain pattern javac emits for
 * constant initializers is followed; anything else answers null.
 */
final class StaticTables {
    private StaticTables() {
    }

    /** A {@code static final} primitive array's elements as bits, or null. */
    static long[] read(Class<?> owner, String name, char elementType) {
        Object array = reflect(owner, name);
        if (array == null) {
            array = fromInitializer(owner, name);
        }
        if (array == null || !array.getClass().isArray() || !array.getClass().getComponentType().isPrimitive()) {
            return null;
        }
        long[] bits = new long[Array.getLength(array)];
        for (int i = 0; i < bits.length; i++) {
            bits[i] = bitsOf(Array.get(array, i), elementType);
        }
        return bits;
    }

    /** A {@code static final} primitive field's value from the class initializer, or null. */
    static Const initialValue(Class<?> owner, String name, char type) {
        Object v = fromInitializer(owner, name);
        if (!(v instanceof Number) && !(v instanceof Character) && !(v instanceof Boolean)) {
            return null;
        }
        long bits = bitsOf(v, type);
        return switch (type) {
            case 'J' -> Const.ofLong(bits);
            case 'F' -> Const.ofFloat(Float.intBitsToFloat((int) bits));
            case 'D' -> Const.ofDouble(Double.longBitsToDouble(bits));
            default -> Const.ofInt((int) bits);
        };
    }

    private static long bitsOf(Object v, char type) {
        return switch (type) {
            case 'F' -> Float.floatToRawIntBits(((Number) v).floatValue()) & 0xffffffffL;
            case 'D' -> Double.doubleToRawLongBits(((Number) v).doubleValue());
            case 'J' -> ((Number) v).longValue();
            case 'Z' -> v instanceof Boolean b ? (b ? 1 : 0) : ((Number) v).intValue();
            case 'C' -> v instanceof Character c ? c : ((Number) v).intValue();
            default -> ((Number) v).intValue();
        };
    }

    private static Object reflect(Class<?> owner, String name) {
        try {
            Field field = owner.getDeclaredField(name);
            int mods = field.getModifiers();
            if (!Modifier.isStatic(mods) || !Modifier.isFinal(mods)) {
                return null;
            }
            io.gradsync.tasks.internal.UserCode.open(field);
            return field.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** Follows {@code <clinit>} as far as it is constants, new arrays, element stores and static stores. */
    private static Object fromInitializer(Class<?> owner, String name) {
        MethodModel clinit = clinit(owner);
        if (clinit == null || clinit.code().isEmpty()) {
            return null;
        }
        Deque<Object> stack = new ArrayDeque<>();
        for (CodeElement e : clinit.code().get()) {
            switch (e) {
                case ConstantInstruction c -> stack.push(c.constantValue());
                case NewPrimitiveArrayInstruction n -> {
                    int length = ((Number) stack.pop()).intValue();
                    Class<?> component = switch (n.typeKind()) {
                        case BOOLEAN -> boolean.class;
                        case BYTE -> byte.class;
                        case CHAR -> char.class;
                        case SHORT -> short.class;
                        case INT -> int.class;
                        case LONG -> long.class;
                        case FLOAT -> float.class;
                        default -> double.class;
                    };
                    stack.push(Array.newInstance(component, length));
                }
                case StackInstruction st when st.opcode() == Opcode.DUP -> stack.push(stack.peek());
                case ArrayStoreInstruction st -> {
                    Object value = stack.pop();
                    int index = ((Number) stack.pop()).intValue();
                    Object array = stack.pop();
                    Class<?> c = array.getClass().getComponentType();
                    Number n = value instanceof Number num ? num : 0;
                    if (c == boolean.class) {
                        Array.setBoolean(array, index, (n.intValue() & 1) != 0);
                    } else if (c == byte.class) {
                        Array.setByte(array, index, n.byteValue());
                    } else if (c == char.class) {
                        Array.setChar(array, index, (char) n.intValue());
                    } else if (c == short.class) {
                        Array.setShort(array, index, n.shortValue());
                    } else if (c == int.class) {
                        Array.setInt(array, index, n.intValue());
                    } else if (c == long.class) {
                        Array.setLong(array, index, n.longValue());
                    } else if (c == float.class) {
                        Array.setFloat(array, index, n.floatValue());
                    } else {
                        Array.setDouble(array, index, n.doubleValue());
                    }
                }
                case FieldInstruction fi when fi.opcode() == Opcode.PUTSTATIC && fi.owner().asInternalName().equals(owner.getName().replace('.', '/')) -> {
                    Object value = stack.pop();
                    if (fi.name().equalsString(name)) {
                        return value;
                    }
                }
                case java.lang.classfile.Instruction other -> {
                    return null; // code beyond constants: not followed
                }
                default -> {
                }
            }
        }
        return null;
    }

    private static MethodModel clinit(Class<?> owner) {
        String resource = owner.getName().substring(owner.getName().lastIndexOf('.') + 1) + ".class";
        try (InputStream in = owner.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            for (MethodModel m : ClassFile.of().parse(in.readAllBytes()).methods()) {
                if (m.methodName().equalsString("<clinit>")) {
                    return m;
                }
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
