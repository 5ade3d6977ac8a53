package io.gradsync.tasks.compiler.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Test helper: assembles PTX with the CUDA toolkit's {@code ptxas}, which rejects any invalid PTX. */
public final class Ptxas {
    private Ptxas() {
    }

    /** True when {@code ptxas} runs here. */
    public static boolean available() {
        try {
            Process p = new ProcessBuilder("ptxas", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** Assembles {@code ptx} for {@code sm_<sm>}; returns ptxas' output, or throws AssertionError with it. */
    public static String assemble(String ptx, int sm) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("ptxas");
        try {
            Path in = Files.writeString(dir.resolve("k.ptx"), ptx);
            Path out = dir.resolve("k.cubin");
            Process p = new ProcessBuilder("ptxas", "-arch=sm_" + sm, "-v", "-o", out.toString(), in.toString())
                    .redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError("ptxas -arch=sm_" + sm + " failed:\n" + output + "\n--- ptx ---\n" + ptx);
            }
            return output;
        } finally {
            try (var files = Files.list(dir)) {
                files.forEach(f -> f.toFile().delete());
            }
            Files.deleteIfExists(dir);
        }
    }
}
