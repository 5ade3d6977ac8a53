package io.gradsync.tasks.compiler.ir;

/**
 * A Java array that lives in a kernel rather than being passed to it: a fixed-size private array
 * ({@code new float[8]}), a group-local array shared by a work group
 * ({@code KernelContext.allocateFloatLocalArray}), or a read-only table (a {@code static final}
 * primitive array, its contents taken when the kernel is compiled).
 *
 * @param id       unique within a kernel
 * @param space    where it lives
 * @param javaType the element's descriptor letter: {@code Z B C S I J F D}
 * @param length   elements, fixed when the kernel is compiled
 * @param table    for {@link Space#TABLE}: the elements' bits ({@code int} and {@code float}
 *                 elements in the low 32 bits), else null
 */
public record MemArray(int id, Space space, char javaType, int length, long[] table) {
    public enum Space { PRIVATE, GROUP, TABLE }

    public MemArray {
        if ("ZBCSIJFD".indexOf(javaType) < 0) {
            throw new IllegalArgumentException("element type " + javaType);
        }
        if (length < 0) {
            throw new IllegalArgumentException("length " + length);
        }
    }

    /** The type elements have as values (narrow integer types are held as int). */
    public IrType valueType() {
        return switch (javaType) {
            case 'J' -> IrType.I64;
            case 'F' -> IrType.F32;
            case 'D' -> IrType.F64;
            default -> IrType.I32;
        };
    }

    /** Bytes per element in device memory. */
    public int elementBytes() {
        return valueType().isWide() ? 8 : 4;
    }

    /** The Java type's name, for messages and comments. */
    public String javaTypeName() {
        return switch (javaType) {
            case 'Z' -> "boolean";
            case 'B' -> "byte";
            case 'C' -> "char";
            case 'S' -> "short";
            case 'I' -> "int";
            case 'J' -> "long";
            case 'F' -> "float";
            default -> "double";
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MemArray m && m.id == id;
    }

    @Override
    public int hashCode() {
        return id;
    }
}
