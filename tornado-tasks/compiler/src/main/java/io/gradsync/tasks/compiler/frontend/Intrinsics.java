package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.Insn.UnOp;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.lang.classfile.Opcode;
import java.lang.constant.ClassDesc;
import java.util.List;

import static io.gradsync.tasks.compiler.frontend.Descriptors.API;

/**
 * Intrinsics: calls that become IR instructions instead of being inlined. {@code Math} and
 * {@code StrictMath}'s min, max, abs, sqrt and fma, {@code Float}/{@code Double} bit casts and
 * half conversions, {@code HalfFloats}, and {@code Atomics}; calls on the KernelContext and on
 * kernel arrays go to {@link ApiCalls}. Every other JDK method is inlined as Java code, so its
 * results are bit for bit the JDK's.
 */
final class Intrinsics extends Stage {
    private static final String ATOMIC_MODES = "L" + API + "MemoryScope;L" + API + "MemoryOrder;)" ;

    Intrinsics(Translation t) {
        super(t);
    }

    /** Maps API and java.lang methods to IR; returns false when the call is not an intrinsic. */
    boolean intrinsic(Frame f, Opcode opcode, String owner, String name, String desc, List<StackValue> stack) {
        if (owner.startsWith(API) && opcode == Opcode.INVOKEVIRTUAL) {
            String cls = owner.substring(API.length());
            if (cls.equals("KernelContext")) {
                t.api.translateContextCall(f, name, desc, stack);
                return true;
            }
            if (Descriptors.arrayKind(ClassDesc.ofInternalName(owner)) != null || owner.equals(API + "SixteenBitFloatArray")) {
                // a helper may take the common parent of bf16 and fp16 arrays: the reference says which it is
                t.api.translateArrayCall(f, name, desc, stack);
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
            t.controlFlow.checkStoreInsideParallel(f);
            Operand value = pop(f, stack);
            Operand index = pop(f, stack);
            Ref r = popRef(f, stack);
            ArrayParam ap = ApiCalls.array(f, r);
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
                case "roundToOdd(D)F" -> UnOp.F64_TO_F32_ODD;
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

    /**
     * {@code Atomics.getAndAdd / getAndMax / getAndMin / getAndSet / compareAndExchange / load /
     * store (array, index, [value, [expected,]] scope, order)}: the scope and order must be the
     * enum constants themselves, fixed when the kernel is compiled.
     */
    private void translateAtomic(Frame f, String name, String desc, List<StackValue> stack) {
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
        ArrayParam ap = ApiCalls.array(f, popRef(f, stack));
        if (op != Insn.AtomicOp.LOAD) {
            t.controlFlow.checkStoreInsideParallel(f);
        }
        Var dst = op == Insn.AtomicOp.STORE ? null : ir.newVar(ap.element().valueType(), "");
        ir.emit(new Insn.Atomic(op, dst, ap, index, value, expected, scope, order));
        if (dst != null) {
            push(stack, dst);
        }
    }

    private static Object constantRef(Frame f, Ref r, String what) {
        if (r.target() instanceof Insn.Order || r.target() instanceof Insn.Scope) {
            return r.target();
        }
        throw f.error(what + " that is not one of the enum's constants");
    }

    /** A one-operand intrinsic whose result type is the descriptor's return type. */
    private boolean unary(Frame f, UnOp op, String desc, List<StackValue> stack) {
        Operand a = pop(f, stack);
        IrType result = Descriptors.irType(desc.charAt(desc.length() - 1));
        Var dst = ir.newVar(result, "");
        ir.emit(new Insn.Unary(op, dst, a));
        push(stack, dst);
        return true;
    }
}
