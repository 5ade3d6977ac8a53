package io.gradsync.sync;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Starts N JVMs on this host the way torchrun would: each with RANK, WORLD_SIZE, LOCAL_RANK,
 * MASTER_ADDR, MASTER_PORT (a free port) and NCCL_NVLS_ENABLE=0, on this JVM's class path,
 * output to a file per rank. Used by the multi-process GPU tests.
 */
final class ProcessGroup {
    record Outcome(int rank, int exitCode, long millis, String output) {
        boolean timedOut() {
            return exitCode == Integer.MIN_VALUE;
        }
    }

    private ProcessGroup() {
    }

    /** Runs {@code mainClass args} in {@code n} processes and waits up to {@code limitSeconds} for all. */
    static List<Outcome> run(int n, Class<?> mainClass, List<String> args, Map<String, String> extraEnv,
            long limitSeconds) throws IOException, InterruptedException {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        Path dir = Files.createTempDirectory("gradsync-ranks");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> processes = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        long start = System.nanoTime();
        for (int r = 0; r < n; r++) {
            List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xss4m",
                    "-cp", classPath(), mainClass.getName()));
            cmd.addAll(args);
            Path log = dir.resolve("rank" + r + ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
            Map<String, String> env = pb.environment();
            env.put("RANK", String.valueOf(r));
            env.put("WORLD_SIZE", String.valueOf(n));
            env.put("LOCAL_RANK", String.valueOf(r));
            env.put("MASTER_ADDR", "127.0.0.1");
            env.put("MASTER_PORT", String.valueOf(port));
            env.put("NCCL_NVLS_ENABLE", "0"); // NVLink multicast must stay off on the GPU node
            env.remove("GRADSYNC_MASTER_PORT");
            env.remove("TORCHELASTIC_USE_AGENT_STORE");
            env.putAll(extraEnv);
            processes.add(pb.start());
            logs.add(log);
        }
        java.util.concurrent.atomic.AtomicLongArray ended = new java.util.concurrent.atomic.AtomicLongArray(n);
        for (int r = 0; r < n; r++) {
            int rank = r;
            processes.get(r).onExit().thenRun(() -> ended.set(rank, System.nanoTime())); // exit time as it happens
        }
        long deadline = start + TimeUnit.SECONDS.toNanos(limitSeconds);
        for (Process p : processes) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                p.waitFor(left, TimeUnit.NANOSECONDS);
            }
        }
        List<Outcome> outcomes = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Process p = processes.get(r);
            boolean alive = p.isAlive();
            if (alive) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            String out = Files.readString(logs.get(r), StandardCharsets.UTF_8);
            long end = alive || ended.get(r) == 0 ? System.nanoTime() : ended.get(r);
            outcomes.add(new Outcome(r, alive ? Integer.MIN_VALUE : p.exitValue(), (end - start) / 1_000_000, out));
        }
        return outcomes;
    }

    /**
     * This JVM's class path, including what a launcher put in a class loader. The JUnit console
     * does not list the jars of a {@code lib/*} wildcard among its loader's URLs, so the folders of
     * the jars our classes come from are added as wildcards too (JCuda's natives jar, which has no
     * class to find it by, lies beside them).
     */
    static String classPath() {
        Set<String> entries = new LinkedHashSet<>();
        for (Class<?> anchor : new Class<?>[] {NcclWorker.class, GradientSynchronizer.class, io.gradsync.nccl.Nccl.class,
            io.gradsync.tasks.cuda.CudaDevice.class, jcuda.driver.JCudaDriver.class}) {
            try {
                Path p = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
                entries.add(p.toString());
                if (Files.isRegularFile(p) && p.getParent() != null) {
                    entries.add(p.getParent().resolve("*").toString());
                }
            } catch (URISyntaxException | RuntimeException e) {
                // no code source: the class path entries below must do
            }
        }
        for (ClassLoader l = Thread.currentThread().getContextClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    try {
                        entries.add(Path.of(url.toURI()).toString());
                    } catch (URISyntaxException | IllegalArgumentException e) {
                        // not a file: nothing a child JVM could use
                    }
                }
            }
        }
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!e.isBlank()) {
                entries.add(e);
            }
        }
        return String.join(File.pathSeparator, entries);
    }
}
