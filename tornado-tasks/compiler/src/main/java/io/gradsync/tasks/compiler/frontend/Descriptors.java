package io.gradsync.tasks.compiler.frontend;

import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.IrType;

import java.lang.classfile.TypeKind;
import java.lang.constant.ClassDesc;

/** Java types as the front end sees them: the kernel API's classes by internal name, descriptors to IR types. */
final class Descriptors {
    /** The kernel API's package as an internal-name prefix. */
    static final String API = "io/gradsync/tasks/api/";

    private Descriptors() {
    }

    /** The element kind of a kernel array class, or null if {@code d} is not one. */
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

    /** The IR type of a primitive descriptor; the int-like ones (Z, B, C, S, I) are I32. */
    static IrType irType(char descriptor) {
        return switch (descriptor) {
            case 'J' -> IrType.I64;
            case 'F' -> IrType.F32;
            case 'D' -> IrType.F64;
            default -> IrType.I32;
        };
    }

    static IrType irType(TypeKind k) {
        return switch (k) {
            case LONG -> IrType.I64;
            case FLOAT -> IrType.F32;
            case DOUBLE -> IrType.F64;
            default -> IrType.I32;
        };
    }
}
