package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code gradsync train} end to end on JVM devices: it trains, prints the sync table, and rejects bad input. */
class TrainCommandTest {

    private static String run(int expectedExit, String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
            assertEquals(expectedExit, Gradsync.run(args), () -> bytes.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(saved);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void trainsAndReportsSyncTimePerBackend() {
        String out = run(0, "train", "--runtime", "jvm", "--devices", "2", "--steps", "40", "--layers", "8,32,4",
                "--batch", "32", "--bucket", "1K", "--dtype", "bf16", "--optimizer", "sgd", "--lr", "0.1", "--backend", "all");
        assertTrue(out.contains("cpu: loss"), out);
        assertTrue(out.contains("sync(ms)/step"), out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("cpu ") && l.trim().split("\\s+").length == 9), out);
        double first = Double.parseDouble(out.replaceAll("(?s).*cpu: loss ([0-9.]+) -> ([0-9.]+).*", "$1"));
        double last = Double.parseDouble(out.replaceAll("(?s).*cpu: loss ([0-9.]+) -> ([0-9.]+).*", "$2"));
        assertTrue(last < first, "loss must fall: " + first + " -> " + last);
        // all = every backend this machine can run; opencl runs on OpenCL devices (PoCL in CI), not JVM ones
        if (io.gradsync.tasks.opencl.OpenClRuntime.status().available()) {
            assertTrue(out.contains("opencl: loss"), out);
            String cpuLoss = out.replaceAll("(?s).*cpu: loss [0-9.]+ -> ([0-9.]+).*", "$1");
            String clLoss = out.replaceAll("(?s).*opencl: loss [0-9.]+ -> ([0-9.]+).*", "$1");
            assertEquals(Double.parseDouble(cpuLoss), Double.parseDouble(clLoss), 1e-3, "same data, same model, same averages");
        }
    }

    @Test
    void rejectsABatchThatDoesNotSplitOverTheDevices() {
        run(2, "train", "--runtime", "jvm", "--devices", "3", "--batch", "10", "--steps", "1");
        run(2, "train", "--runtime", "jvm", "--optimizer", "rmsprop");
        run(2, "train", "--runtime", "jvm", "--layers", "8,x,4");
    }

    /** Where no backend asked for can run, the reason goes to stderr too, as bench says it, not only the stdout log. */
    @Test
    void saysOnStderrWhyNoBackendCouldRun() {
        org.junit.jupiter.api.Assumptions.assumeFalse(io.gradsync.tasks.cuda.CudaRuntime.status().available(), "CUDA here: ptx runs");
        CliRun r = CliRun.of("train", "--backend", "ptx", "--steps", "1");
        assertEquals(1, r.exitCode(), r.out() + r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("gradsync train: no backend could run here: ptx ("), r.err());
    }
}
