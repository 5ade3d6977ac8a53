package io.gradsync.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Starts {@link AvailabilityProbe} in a fresh JVM and parses its {@code key=value} output. */
final class ChildJvm {
    private ChildJvm() {
    }

    static Path classesDir(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    static Map<String, String> probe(String classPath, List<String> jvmArgs, Map<String, String> env) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(AvailabilityProbe.class.getName());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove(NativeLoader.LIBRARY_ENV);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "probe JVM did not finish");
        assertEquals(0, p.exitValue(), () -> "probe JVM failed:\n" + out);
        Map<String, String> result = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                result.putIfAbsent(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        assertEquals("true", result.get("end"), () -> "probe JVM crashed or stopped early:\n" + out);
        return result;
    }

    /** Compiles C source into a shared library with gcc; the test is skipped where gcc is missing. */
    static Path gcc(Path dir, String fileName, String source, String... flags) throws IOException, InterruptedException {
        Path c = dir.resolve(fileName + ".c");
        java.nio.file.Files.writeString(c, source);
        Path lib = dir.resolve(fileName);
        List<String> cmd = new ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-o", lib.toString()));
        cmd.addAll(List.of(flags));
        cmd.add(c.toString());
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            org.junit.jupiter.api.Assumptions.abort("gcc is not available: " + e.getMessage());
            throw e;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), () -> "gcc failed:\n" + out);
        return lib;
    }
}
