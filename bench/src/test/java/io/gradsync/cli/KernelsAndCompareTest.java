package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KernelsAndCompareTest {

    @ParameterizedTest
    @CsvSource({"ptx, ptx, '.visible .entry '", "opencl, cl, '__kernel void k_'"})
    void emitWritesTheCodeOfEveryBuiltinKernel(String target, String ext, String entry, @TempDir Path dir) throws Exception {
        CliRun r = CliRun.of("kernels", "--emit", target, "--out", dir.resolve("k").toString());
        assertEquals(0, r.exitCode(), r.err());
        List<KernelSpec> all = BuiltinKernels.all();
        assertTrue(all.size() >= 40, "built-ins: " + all.size());
        for (KernelSpec k : all) {
            Path f = dir.resolve("k").resolve(k.name() + "." + ext);
            assertTrue(Files.isRegularFile(f), f.toString());
            String code = Files.readString(f);
            assertTrue(code.contains(entry + k.name() + "("), k.name() + " has its entry point in " + f);
        }
        String module = Files.readString(dir.resolve("k/gradsync-kernels." + ext));
        for (KernelSpec k : all) {
            assertTrue(module.contains(entry + k.name() + "("), k.name() + " in the module");
        }
    }

    @Test
    void kernelsWithoutEmitListsThemAll() {
        CliRun r = CliRun.of("kernels");
        assertEquals(0, r.exitCode());
        for (KernelSpec k : BuiltinKernels.all()) {
            assertTrue(r.out().contains(" " + k.name() + " "), k.name());
        }
    }

    @Test
    void compareWithoutCudaPrintsOpenClAndJvmRowsAndSaysWhyCudaIsNot() {
        CliRun r = CliRun.of("compare", "--kernels", "average4,sumIntoBf16,sumOfSquaresPartials", "--cpu-size", "256K",
                "--warmup", "1", "--iters", "3");
        assertEquals(0, r.exitCode(), r.err());
        boolean cuda = DeviceCatalog.status(DeviceRuntime.CUDA).available();
        boolean openCl = DeviceCatalog.status(DeviceRuntime.OPENCL).available();
        if (!cuda) {
            assertTrue(r.out().contains("ptx (generated):     n/a (CUDA unavailable: "), r.out());
        }
        if (!openCl) {
            assertTrue(r.out().contains("opencl (generated):  n/a ("), r.out());
        }
        for (String kernel : List.of("average4", "sumIntoBf16", "sumOfSquaresPartials")) {
            Optional<String> row = r.out().lines().filter(l -> l.startsWith(" " + kernel + " ")).findFirst();
            assertTrue(row.isPresent(), kernel + " row in " + r.out());
            // the JVM column (before ptx/nvcc, jvm/avg2 and the check) always has a figure: "GB/s %"
            String[] cells = row.get().trim().split("\\s+");
            String jvmPercent = cells[cells.length - 4];
            // (a figure, not n/a; a loaded CI machine may make it tiny)
            assertTrue(jvmPercent.endsWith("%") && Double.parseDouble(cells[cells.length - 5]) >= 0, row.get());
            // average2 is timed beside the kernels the JVM goal covers, and only beside those
            assertEquals(!kernel.equals("sumOfSquaresPartials"), cells[cells.length - 2].endsWith("%"), row.get());
            if (openCl) {
                assertTrue(row.get().chars().filter(c -> c == '%').count() >= 2, "opencl and jvm figures: " + row.get());
                assertTrue(row.get().endsWith("  ok"), "the generated OpenCL C computes what the Java does: " + row.get());
            }
        }
    }

    @Test
    void compareFormsJvmTimesOnlyTheJvmAndEndsWithItsGoal() {
        CliRun r = CliRun.of("compare", "--forms", "jvm", "--kernels", "average2,average3Bf16", "--cpu-size", "256K",
                "--warmup", "1", "--iters", "3");
        assertEquals(0, r.exitCode(), r.err());
        for (String form : List.of("ptx (generated):", "nvcc -O3 (CUDA C):", "opencl (generated):")) {
            assertTrue(r.out().contains(String.format("# %-20s n/a (left out by --forms)", form)), form + " in " + r.out());
        }
        Optional<String> row = r.out().lines().filter(l -> l.startsWith(" average3Bf16 ")).findFirst();
        // the JVM's figure and its ratio to average2 timed beside it
        assertTrue(row.isPresent() && row.get().chars().filter(c -> c == '%').count() == 2, "the JVM's figures only: " + r.out());
        String[] cells = row.get().trim().split("\\s+");
        assertTrue(Double.parseDouble(cells[cells.length - 2].replace("%", "")) > 0, row.get());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("# goal: on the JVM, average3..8 and the 16-bit kernels >= half of average2 timed"
                + " beside each: ") && l.contains("(lowest average3Bf16, ")), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("# goal: on the JVM, average3..8 and the 16-bit kernels >= half of average2's row (")),
                r.out());
    }

    @Test
    void compareRefusesAnUnknownForm() {
        CliRun r = CliRun.of("compare", "--forms", "jvm,cuda", "--kernels", "average2");
        assertEquals(2, r.exitCode(), r.out());
        assertTrue(r.err().contains("--forms: unknown form 'cuda' (ptx, nvcc, opencl, jvm)"), r.err());
    }
}
