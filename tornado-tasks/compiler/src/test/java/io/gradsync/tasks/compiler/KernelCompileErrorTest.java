package io.gradsync.tasks.compiler;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.CodeElement;
import java.lang.classfile.Instruction;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.reflect.Method;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each unsupported construct fails compilation with a message naming class, method, offset and construct. */
class KernelCompileErrorTest {

    private static KernelCompileException reject(String method) {
        Method m = null;
        for (Method c : BadKernels.class.getDeclaredMethods()) {
            if (c.getName().equals(method)) {
                m = c;
            }
        }
        Method found = m;
        KernelCompiler compiler = new KernelCompiler();
        return assertThrows(KernelCompileException.class, () -> compiler.compile(found), method + " must be rejected");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "allocatesObject     | object allocation (new java/lang/Object)",
            "allocatesArray      | array allocation of a length that is not a constant",
            "javaArrayParameter  | kernel parameter 0 of type float[]",
            "throwsException     | object allocation (new java/lang/IllegalStateException)",
            "tryCatch            | try/catch",
            "synchronizedBlock   | synchronized block",
            "synchronizedMethod  | synchronized method",
            "readsMutableStatic  | static field that is not final",
            "writesStatic        | write to static field",
            "usesString          | constant of type String",
            "recursion           | recursive call to io.gradsync.tasks.compiler.BadKernels.factorial",
            "lambda              | invokedynamic",
            "returnsValue        | kernel method must return void",
            "nullReference       | null reference",
            "virtualCallOnArray  | array method fill",
            "choosesArray        | control flow merge",
            "parallelStepTwo     | must step by exactly one",
            "unsupportedMath     | object allocation (new java/lang/ArithmeticException)",
            "typeCheck           | type check (checkcast",
            "callsBadHelper      | object allocation (new java/lang/StringBuilder)",
            "breakInParallelLoop | break out of a @Parallel loop",
            "returnInParallelLoop | return inside a @Parallel loop",
            "parallelInsideLoop  | @Parallel loop nested inside another loop",
            "storeAfterParallelLoop | array store outside the @Parallel loop",
    })
    void rejectsWithClearMessage(String method, String construct) {
        KernelCompileException e = reject(method);
        String msg = e.getMessage();
        assertTrue(msg.contains(construct), msg);
        assertTrue(msg.contains("io.gradsync.tasks.compiler.BadKernels."), msg);
        assertTrue(msg.contains("bytecode offset"), msg);
        assertTrue(e.methodName().startsWith(method) || method.equals("callsBadHelper") || method.equals("recursion") || method.equals("unsupportedMath"), msg);
    }

    @Test
    void offsetPointsAtTheOffendingInstruction() throws Exception {
        assertEquals(bciOf("allocatesObject", Opcode.NEW), reject("allocatesObject").bytecodeOffset());
        assertEquals(bciOf("allocatesArray", Opcode.NEWARRAY), reject("allocatesArray").bytecodeOffset());
        assertEquals(bciOf("synchronizedBlock", Opcode.MONITORENTER), reject("synchronizedBlock").bytecodeOffset());
    }

    /** The source line too, from the class file's line table (javac keeps it by default), of the construct and of each caller. */
    @Test
    void theSourceLineIsNamedWhereTheClassFileHasIt() throws Exception {
        java.util.List<String> source = java.nio.file.Files.readAllLines(
                java.nio.file.Path.of("src/test/java/io/gradsync/tasks/compiler/BadKernels.java"));
        int allocation = source.indexOf("        Object o = new Object();") + 1;
        KernelCompileException e = reject("allocatesObject");
        assertEquals(allocation, e.line(), e.getMessage());
        assertTrue(e.getMessage().contains("at bytecode offset " + e.bytecodeOffset() + " (line " + allocation + "): "), e.getMessage());
        int helper = source.indexOf("        x.set(0, new StringBuilder().length());") + 1;
        int call = source.indexOf("        helperAllocates(x);") + 1;
        KernelCompileException inlined = reject("callsBadHelper");
        assertEquals(helper, inlined.line(), inlined.getMessage());
        assertTrue(inlined.getMessage().contains("(line " + call + ")"), inlined.getMessage());
    }

    @Test
    void inlinedErrorNamesTheCalleeAndTheCallChain() {
        KernelCompileException e = reject("callsBadHelper");
        assertTrue(e.methodName().startsWith("helperAllocates"), e.getMessage());
        assertTrue(e.getMessage().contains("inlined into io.gradsync.tasks.compiler.BadKernels.callsBadHelper"), e.getMessage());
    }

    @Test
    void instanceMethodIsRejected() {
        KernelCompileException e = reject("instanceMethod");
        assertTrue(e.getMessage().contains("instance method"), e.getMessage());
    }

    private static int bciOf(String method, Opcode opcode) throws Exception {
        try (InputStream in = BadKernels.class.getResourceAsStream("BadKernels.class")) {
            var model = ClassFile.of().parse(in.readAllBytes());
            for (MethodModel m : model.methods()) {
                if (m.methodName().equalsString(method)) {
                    int pos = 0;
                    for (CodeElement e : m.code().orElseThrow()) {
                        if (e instanceof Instruction ins) {
                            if (ins.opcode() == opcode) {
                                return pos;
                            }
                            pos += ins.sizeInBytes();
                        }
                    }
                }
            }
        }
        throw new AssertionError(opcode + " not in " + method);
    }
}
