package io.gradsync.tasks.compiler.ir;

/** A constant; {@code bits} holds an int/long value or the raw IEEE bits of a float/double. */
public record Const(IrType type, long bits) implements Operand {

    public static Const ofInt(int v) {
        return new Const(IrType.I32, v);
    }

    public static Const ofLong(long v) {
        return new Const(IrType.I64, v);
    }

    public static Const ofFloat(float v) {
        return new Const(IrType.F32, Float.floatToRawIntBits(v) & 0xFFFF_FFFFL);
    }

    public static Const ofDouble(double v) {
        return new Const(IrType.F64, Double.doubleToRawLongBits(v));
    }

    public int intValue() {
        return (int) bits;
    }

    public float floatValue() {
        return Float.intBitsToFloat((int) bits);
    }

    public double doubleValue() {
        return Double.longBitsToDouble(bits);
    }
}
