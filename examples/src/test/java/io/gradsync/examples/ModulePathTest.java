package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.DeviceRuntime;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * gradsync's jars on the module path, as a modular user program meets them: the example trainer
 * runs as module {@code io.gradsync.examples} (which the compiler already held to the exported
 * packages), with gradsync's modules and JCuda / JOCL as automatic modules beside it.
 */
class ModulePathTest {

    @Test
    void theTrainerRunsAsAModule() throws Exception {
        String out = runAsModule("--runtime", "jvm", "--devices", "2", "--backend", "cpu", "--memory", "buckets", "--steps", "5");
        assertTrue(out.contains("2 replicas on [jvm:0, jvm:1], bucket memory"), out);
    }

    /** JCuda loads its natives from its own jar: on the module path too, and the GPU is reached. */
    @Test
    @Tag("gpu")
    void theTrainerRunsAsAModuleOnTheGpu() throws Exception {
        assumeTrue(!DeviceCatalog.gpus(DeviceRuntime.CUDA).isEmpty(), () -> DeviceCatalog.status(DeviceRuntime.CUDA).describe());
        String out = runAsModule("--runtime", "cuda", "--devices", "2", "--backend", "ptx", "--memory", "own", "--steps", "5");
        assertTrue(out.contains("2 replicas on [cuda:0"), out);
    }

    private static String runAsModule(String... args) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        // the README's flag for the module path: no module calling native code is left out (no warning)
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=io.gradsync.tasks.runtime,io.gradsync.sync,io.gradsync.nccl,jcuda,jocl",
                "--module-path", String.join(File.pathSeparator, modulePath()),
                "-m", "io.gradsync.examples/io.gradsync.examples.OwnMemoryTraining"));
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), () -> String.join(" ", cmd) + "\n" + out);
        assertFalse(out.contains("restricted method"), () -> "native access missing for a module:\n" + out);
        return out;
    }

    /** Where this test's own classes came from (Maven's class path or the GPU bundle's jars alike). */
    private static Set<String> modulePath() throws Exception {
        Set<String> path = new LinkedHashSet<>();
        for (Class<?> c : List.of(OwnMemoryTraining.class, GradientSynchronizer.class, CudaDevice.class,
                Class.forName("io.gradsync.tasks.api.TaskGraph"), Class.forName("io.gradsync.tasks.compiler.KernelCompiler"),
                Class.forName("io.gradsync.tasks.kernels.ExecutionPlan"), Class.forName("io.gradsync.nccl.Nccl"), jcuda.driver.JCudaDriver.class, Class.forName("org.jocl.CL", false, ModulePathTest.class.getClassLoader()) /* not initialized: that loads OpenCL */)) {
            path.add(source(c));
        }
        File jcudaDir = new File(source(jcuda.driver.JCudaDriver.class)).getParentFile();
        List<String> candidates = new ArrayList<>(Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator)));
        File[] beside = jcudaDir.listFiles();
        if (beside != null) {
            Arrays.stream(beside).map(File::getPath).forEach(candidates::add);
        }
        candidates.stream().filter(e -> new File(e).getName().startsWith("jcuda-natives")).findFirst().ifPresent(path::add);
        return path;
    }

    private static String source(Class<?> c) throws URISyntaxException {
        return new File(c.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
    }
}
