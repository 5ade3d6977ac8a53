package io.gradsync.tasks.compiler;

/**
 * A kernel uses a construct the compiler does not translate. The message names the class, the
 * method, the bytecode offset (and the source line, where the class file keeps javac's line
 * table, as it does by default) and the construct, plus the call chain when the construct is in a
 * method inlined into the kernel.
 *
 * <p>Thread-safety: immutable once thrown.
 */
public final class KernelCompileException extends RuntimeException {
    private final String className;
    private final String methodName;
    private final int bytecodeOffset;
    private final int line;
    private final String construct;

    public KernelCompileException(String className, String methodName, int bytecodeOffset, String construct, String callChain) {
        this(className, methodName, bytecodeOffset, -1, construct, callChain);
    }

    /** As above, with the source line of the offending instruction ({@code line} -1: not known). */
    public KernelCompileException(String className, String methodName, int bytecodeOffset, int line, String construct, String callChain) {
        super("cannot compile " + className + "." + methodName + " at bytecode offset " + bytecodeOffset
                + (line > 0 ? " (line " + line + ")" : "") + ": " + construct + (callChain.isEmpty() ? "" : " (" + callChain + ")"));
        this.className = className;
        this.methodName = methodName;
        this.bytecodeOffset = bytecodeOffset;
        this.line = line;
        this.construct = construct;
    }

    /** The source line of the offending instruction, from the class file's line table; -1 where it has none. */
    public int line() {
        return line;
    }

    public String className() {
        return className;
    }

    /** Method name followed by its descriptor. */
    public String methodName() {
        return methodName;
    }

    /** Offset of the offending instruction in the method's bytecode, or -1 for the method as a whole. */
    public int bytecodeOffset() {
        return bytecodeOffset;
    }

    public String construct() {
        return construct;
    }
}
