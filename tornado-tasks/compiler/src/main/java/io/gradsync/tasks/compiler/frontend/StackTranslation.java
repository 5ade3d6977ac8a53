package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.frontend.StackValue.Cmp;
import io.gradsync.tasks.compiler.frontend.StackValue.Ref;
import io.gradsync.tasks.compiler.frontend.StackValue.Val;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.Insn.ConvOp;
import io.gradsync.tasks.compiler.ir.Insn.ThreadQuery;
import io.gradsync.tasks.compiler.ir.Insn.UnOp;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.lang.classfile.Instruction;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.classfile.instruction.*;
import java.util.List;

import static io.gradsync.tasks.compiler.frontend.Descriptors.irType;

/**
 * Stack-to-IR translation, one bytecode instruction at a time: loads and stores of locals,
 * constants, operators, conversions and the stack operations ({@code dup}, {@code swap}, ...)
 * on the simulated operand stack. Instructions that end a block, call a method or touch an
 * array or static field are handed to the stage that owns them; those with no meaning on a
 * device are rejected here.
 */
final class StackTranslation extends Stage {
    /** Java's {@code %} on float and double, inlined where a device has no such instruction. */
    private static final String JAVA_REMAINDER = JavaRemainder.class.getName().replace('.', '/');

    StackTranslation(Translation t) {
        super(t);
    }

    /** Before a local is overwritten, copies stack entries that still refer to its old value. */
    private void protect(List<StackValue> stack, Var local) {
        for (int d = 0; d < stack.size(); d++) {
            StackValue v = stack.get(d);
            if (v instanceof Val val && val.op().equals(local)) {
                Var copy = ir.newVar(local.type(), "");
                ir.emit(new Insn.Move(copy, local));
                stack.set(d, new Val(copy));
            } else if (v instanceof Cmp c && (c.a().equals(local) || c.b().equals(local))) {
                stack.set(d, materialize(c));
            }
        }
    }

    private static boolean isCategory2(StackValue v) {
        return v instanceof Val val && val.op().type().isWide();
    }

    /** Returns true when the instruction ended the block. */
    boolean translateInsn(Frame f, Instruction ins, List<StackValue> stack, int next) {
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
                    if (f.parallel != null && f.bci == f.parallel.initStoreBci()) {
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
                if (f.parallel != null && f.bci == f.parallel.incrementBci()) {
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
                t.controlFlow.translateBranch(f, br, stack, next);
                return true;
            }
            case ReturnInstruction ri -> {
                t.controlFlow.translateReturn(f, ri, stack);
                return true;
            }
            case StackInstruction st -> translateStack(f, st.opcode(), stack);
            case InvokeInstruction inv -> t.inlining.translateInvoke(f, inv, stack);
            case FieldInstruction fi -> {
                if (fi.opcode() != Opcode.GETSTATIC) {
                    throw f.error(switch (fi.opcode()) {
                        case PUTSTATIC -> "write to static field " + fi.owner().asInternalName() + "." + fi.name().stringValue();
                        default -> "instance field access " + fi.owner().asInternalName() + "." + fi.name().stringValue();
                    });
                }
                StackValue v = t.api.staticValue(f, fi);
                stack.add(v);
            }
            case NopInstruction n -> {
            }
            case ArrayLoadInstruction a -> {
                Operand index = pop(f, stack);
                MemArray m = ApiCalls.memArray(f, popRef(f, stack), a.typeKind());
                Var dst = ir.newVar(m.valueType(), "");
                ir.emit(new Insn.ArrayLoad(dst, m, index));
                push(stack, dst);
            }
            case ArrayStoreInstruction a -> {
                Operand value = pop(f, stack);
                Operand index = pop(f, stack);
                MemArray m = ApiCalls.memArray(f, popRef(f, stack), a.typeKind());
                if (m.space() == MemArray.Space.TABLE) {
                    throw f.error("write to a static final array (its contents are fixed when the kernel is compiled)");
                }
                ir.emit(new Insn.ArrayStore(m, index, value));
            }
            case NewObjectInstruction n -> throw f.error("object allocation (new " + n.className().asInternalName() + ")");
            case NewPrimitiveArrayInstruction n -> {
                Operand length = pop(f, stack);
                stack.add(new Ref(t.api.privateArray(f, n.typeKind(), length)));
            }
            case NewReferenceArrayInstruction n -> throw f.error("array allocation (new " + n.componentType().asInternalName() + "[])");
            case NewMultiArrayInstruction n -> throw f.error("array allocation (multi-dimensional)");
            case ThrowInstruction th -> throw f.error("throwing an exception (athrow)");
            case MonitorInstruction m -> throw f.error("synchronized block (" + m.opcode().name().toLowerCase() + ")");
            case TypeCheckInstruction tc -> throw f.error("type check (" + tc.opcode().name().toLowerCase() + " " + tc.type().asInternalName() + ")");
            case InvokeDynamicInstruction d -> throw f.error("invokedynamic (lambda, method reference or string concatenation: " + d.name().stringValue() + ")");
            case TableSwitchInstruction s -> {
                t.controlFlow.translateSwitch(f, pop(f, stack), s.cases(), s.defaultTarget(), stack);
                return true;
            }
            case LookupSwitchInstruction s -> {
                t.controlFlow.translateSwitch(f, pop(f, stack), s.cases(), s.defaultTarget(), stack);
                return true;
            }
            default -> throw f.error("bytecode " + ins.opcode().name().toLowerCase());
        }
        return false;
    }

    private void translateOperator(Frame f, OperatorInstruction oi, List<StackValue> stack) {
        Opcode o = oi.opcode();
        String n = o.name();
        switch (o) {
            case ARRAYLENGTH -> push(stack, Const.ofInt(ApiCalls.memArray(f, popRef(f, stack), null).length()));
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
            case FREM, DREM -> t.inlining.inline(f, JAVA_REMAINDER, "remainder", o == Opcode.FREM ? "(FF)F" : "(DD)D", stack);
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

    private void translateStack(Frame f, Opcode o, List<StackValue> stack) {
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
                StackValue a = stack.removeLast();
                StackValue b = stack.removeLast();
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
                    StackValue v1 = stack.get(n - 1);
                    StackValue v2 = stack.get(n - 2);
                    stack.add(n - 3, v1);
                    stack.add(n - 3, v2);
                }
            }
            case DUP2_X2 -> {
                StackValue v1 = stack.get(n - 1);
                if (isCategory2(v1)) {
                    int at = isCategory2(stack.get(n - 2)) ? n - 2 : n - 3;
                    stack.add(at, v1);
                } else {
                    StackValue v2 = stack.get(n - 2);
                    int at = isCategory2(stack.get(n - 3)) ? n - 3 : n - 4;
                    stack.add(at, v1);
                    stack.add(at, v2);
                }
            }
            default -> throw f.error("stack operation " + o.name().toLowerCase());
        }
    }
}
