package io.gradsync.tasks.compiler.ir;

/** Value types of the IR; like the JVM, booleans, bytes, shorts and chars live in {@link #I32}. */
public enum IrType {
    I32, I64, F32, F64;

    public boolean isFloat() {
        return this == F32 || this == F64;
    }

    public boolean isWide() {
        return this == I64 || this == F64;
    }
}
