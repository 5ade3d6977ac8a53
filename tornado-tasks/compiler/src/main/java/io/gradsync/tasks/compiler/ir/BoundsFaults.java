package io.gradsync.tasks.compiler.ir;

/**
 * What a bounds-checked kernel records of its first access out of bounds, the same in PTX and
 * OpenCL C: two ints in a record the launcher zeroes, a code naming the array, then the index.
 * Codes: 1 + the Java parameter index of an array parameter; -1 - the id of an array of the
 * kernel's own ({@link MemArray}); 0 where nothing was recorded.
 */
public final class BoundsFaults {
    private BoundsFaults() {
    }

    /** The code of an access out of bounds of array parameter {@code a}. */
    public static int code(KernelParam.ArrayParam a) {
        return 1 + a.javaIndex();
    }

    /** The code of an access out of bounds of the kernel's own array {@code m}. */
    public static int code(MemArray m) {
        return -1 - m.id();
    }
}
