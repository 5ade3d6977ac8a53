package io.gradsync.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every model kernel compiles to PTX and OpenCL C (PoCL runs the OpenCL C in the equivalence
 * tests); where the CUDA toolkit's ptxas is installed, the PTX must assemble for sm_90 (H200), so
 * a kernel the GPU node would reject fails here first.
 */
class MlpKernelsCompileTest {

    static List<Method> kernels() {
        return Arrays.stream(MlpKernels.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers())).toList();
    }

    @Test
    void everyKernelCompilesToPtxAndOpenClC() {
        List<Method> methods = kernels();
        assertEquals(7, methods.size(), "linear, softmaxCrossEntropy, weightGrad, biasGrad, inputGrad, sgd, adam");
        for (Method m : methods) {
            CompiledKernel k = KernelCompiler.shared().compile(m);
            assertTrue(k.ptx(90).contains(".entry"), m.getName());
            assertTrue(k.openCl().contains("__kernel"), m.getName());
        }
    }

    @Test
    void ptxAssemblesForH200() throws Exception {
        assumeTrue(runs("ptxas", "--version"), "ptxas not installed");
        Path dir = Files.createTempDirectory("mlp-ptx");
        try {
            for (Method m : kernels()) {
                Path ptx = Files.writeString(dir.resolve(m.getName() + ".ptx"), KernelCompiler.shared().compile(m).ptx(90));
                Process p = new ProcessBuilder("ptxas", "-arch=sm_90", "-o", dir.resolve(m.getName() + ".cubin").toString(),
                        ptx.toString()).redirectErrorStream(true).start();
                String output = new String(p.getInputStream().readAllBytes());
                assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, m.getName() + ": " + output);
            }
        } finally {
            try (var files = Files.list(dir)) {
                files.forEach(f -> f.toFile().delete());
            }
            Files.delete(dir);
        }
    }

    private static boolean runs(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }
}
