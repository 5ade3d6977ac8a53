package io.gradsync.sync.bucket;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.compiler.KernelCompiler;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The clip kernels compile to OpenCL C and to PTX that ptxas accepts for sm_90 (where ptxas is installed). */
class ClipKernelsCompileTest {

    @Test
    void compileForEveryDevice() throws Exception {
        Path dir = Files.createTempDirectory("clip-ptx");
        try {
            boolean ptxas = ptxasRuns();
            for (Method m : ClipKernels.class.getDeclaredMethods()) {
                var k = KernelCompiler.shared().compile(m);
                assertTrue(k.openCl().contains("__kernel"), m.getName());
                Path ptx = Files.writeString(dir.resolve(m.getName() + ".ptx"), k.ptx(90));
                if (ptxas) {
                    Process p = new ProcessBuilder("ptxas", "-arch=sm_90", "-o", dir.resolve(m.getName() + ".cubin").toString(),
                            ptx.toString()).redirectErrorStream(true).start();
                    String out = new String(p.getInputStream().readAllBytes());
                    assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, m.getName() + ": " + out);
                }
            }
            assumeTrue(ptxas, "ptxas not installed: PTX generated, not assembled");
        } finally {
            try (var files = Files.list(dir)) {
                files.forEach(f -> f.toFile().delete());
            }
            Files.delete(dir);
        }
    }

    private static boolean ptxasRuns() {
        try {
            Process p = new ProcessBuilder("ptxas", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }
}
