package io.gradsync.tasks.compiler.ir;

/** What a kernel array parameter stores, and so how it is loaded and stored on a device. */
public enum ElementKind {
    F32(4, IrType.F32), F64(8, IrType.F64), I32(4, IrType.I32), I64(8, IrType.I64),
    /** IEEE binary16; loads widen to F32, stores round to nearest even. */
    F16(2, IrType.F32),
    /** bfloat16; loads widen to F32, stores round to nearest even. */
    BF16(2, IrType.F32);

    private final int bytes;
    private final IrType valueType;

    ElementKind(int bytes, IrType valueType) {
        this.bytes = bytes;
        this.valueType = valueType;
    }

    public int bytes() {
        return bytes;
    }

    /** The IR type a plain element load produces. */
    public IrType valueType() {
        return valueType;
    }

    public boolean isHalf() {
        return this == F16 || this == BF16;
    }
}
