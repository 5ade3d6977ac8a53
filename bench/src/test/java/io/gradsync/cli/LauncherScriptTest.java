package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** scripts/gradsync --print-flags: the Java it picked, the JVM flags and the environment it sets (no build needed). */
class LauncherScriptTest {
    private static final Path SCRIPT = Path.of("..", "scripts", "gradsync").toAbsolutePath().normalize();

    private static String printFlags(Map<String, String> env, String... args) throws IOException, InterruptedException {
        assumeTrue(Files.isExecutable(SCRIPT) && Files.isExecutable(Path.of("/bin/bash")), "needs bash and " + SCRIPT);
        List<String> cmd = new java.util.ArrayList<>(List.of("/bin/bash", SCRIPT.toString(), "--print-flags"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("POCL_DEVICES");
        pb.environment().remove("GRADSYNC_JAVA");
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    @Test
    void printsJava25TheFlagsAndTheEnvironment() throws Exception {
        String out = printFlags(Map.of(), "bench", "--devices", "3");
        assertTrue(out.contains("java: " + System.getProperty("java.home") + "/bin/java"), "JAVA_HOME first: " + out);
        assertTrue(out.contains("--enable-native-access=ALL-UNNAMED"), out);
        assertTrue(out.contains("-Djava.awt.headless=true"), out);
        assertTrue(out.contains("NCCL_NVLS_ENABLE=0"), out);
        assertTrue(out.lines().anyMatch(l -> l.equals("POCL_DEVICES=pthread pthread pthread")), "one PoCL device per --devices: " + out);
        assertTrue(out.contains("io.gradsync.cli.Gradsync"), out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("LD_PRELOAD=") && l.contains("/lib/libjsig.so")), "signal chaining: " + out);
    }

    @Test
    void userSettingsWin() throws Exception {
        String out = printFlags(Map.of("POCL_DEVICES", "pthread", "NCCL_NVLS_ENABLE", "1", "GRADSYNC_JAVA_OPTS", "-Xmx3g"),
                "--devices=8");
        assertTrue(out.lines().anyMatch(l -> l.equals("POCL_DEVICES=pthread")), out);
        assertTrue(out.contains("NCCL_NVLS_ENABLE=1"), out);
        assertTrue(out.contains("-Xmx3g"), out);
    }
}
