package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.IrType;

/** A PTX virtual register class: its {@code .reg} type and its name prefix. */
enum RegClass {
    PRED(".pred", "%p"), B16(".b16", "%h"), B32(".b32", "%r"), B64(".b64", "%rd"), F32(".f32", "%f"), F64(".f64", "%fd");

    final String decl;
    final String prefix;

    RegClass(String decl, String prefix) {
        this.decl = decl;
        this.prefix = prefix;
    }

    /** The class an IR variable of type {@code t} lives in. */
    static RegClass of(IrType t) {
        return switch (t) {
            case I32 -> B32;
            case I64 -> B64;
            case F32 -> F32;
            case F64 -> F64;
        };
    }
}
