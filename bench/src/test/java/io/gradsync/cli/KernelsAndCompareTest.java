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
        CliRun r = CliRun.of("kernels", "--emit", target, "--out", dir.resolve("build").resolve("k").toString()); // folders made as needed
        assertEquals(0, r.exitCode(), r.err());
        List<KernelSpec> all = BuiltinKernels.all();
        assertTrue(all.size() >= 40, "built-ins: " + all.size());
        for (KernelSpec k : all) {
            Path f = dir.resolve("build/k").resolve(k.name() + "." + ext);
            assertTrue(Files.isRegularFile(f), f.toString());
            String code = Files.readString(f);
            assertTrue(code.contains(entry + k.name() + "("), k.name() + " has its entry point in " + f);
        }
        String module = Files.readString(dir.resolve("build/k/gradsync-kernels." + ext));
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
            // the JVM column (before ptx/nvcc, jvm/copy and the check) always has a figure: "GB/s %"
            String[] cells = row.get().trim().split("\\s+");
            String jvmPercent = cells[cells.length - 4];
            // (a figure, not n/a; a loaded CI machine may make it tiny)
            assertTrue(jvmPercent.endsWith("%") && Double.parseDouble(cells[cells.length - 5]) >= 0, row.get());
            // a copy is timed beside every kernel on the JVM
            assertTrue(cells[cells.length - 2].endsWith("%"), row.get());
            if (openCl) {
                assertTrue(row.get().chars().filter(c -> c == '%').count() >= 2, "opencl and jvm figures: " + row.get());
                assertTrue(row.get().endsWith("  ok"), "the generated OpenCL C computes what the Java does: " + row.get());
            }
        }
        // each device form that ran ends with its goal line, naming the kernels below it
        assertEquals(openCl, r.out().lines().anyMatch(l -> l.startsWith(
                "# goal: opencl (generated), element-wise kernels >= 95% and reductions >= 90% of copy: ")), r.out());
        assertEquals(cuda, r.out().lines().anyMatch(l -> l.startsWith(
                "# goal: ptx (generated), element-wise kernels >= 95% and reductions >= 90% of copy: ")), r.out());
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
        // the JVM's figure and its ratio to a copy timed beside it
        assertTrue(row.isPresent() && row.get().chars().filter(c -> c == '%').count() == 2, "the JVM's figures only: " + r.out());
        String[] cells = row.get().trim().split("\\s+");
        assertTrue(Double.parseDouble(cells[cells.length - 2].replace("%", "")) > 0, row.get());
        String goal = r.out().lines().filter(l -> l.startsWith("# goal: on the JVM, every kernel >= 70% of copy timed beside it: "))
                .findFirst().orElseThrow(() -> new AssertionError("no JVM goal line: " + r.out()));
        assertTrue(goal.contains("(lowest average"), goal);
        // the copy's own spread beside the kernels: slowest, then fastest, both measured
        java.util.regex.Matcher spread = java.util.regex.Pattern.compile("the copy beside ran at ([0-9.]+)-([0-9.]+) GB/s\\)$").matcher(goal);
        assertTrue(spread.find(), goal);
        double slowest = Double.parseDouble(spread.group(1));
        assertTrue(slowest > 0 && slowest <= Double.parseDouble(spread.group(2)), goal);
    }

    @Test
    void compareTimesAUsersKernelClassBesideCopy() {
        CliRun r = CliRun.of("compare", "--forms", "jvm", "--kernels", UsersKernels.class.getName() + ",scale", "--cpu-size", "256K",
                "--warmup", "1", "--iters", "3");
        assertEquals(0, r.exitCode(), r.err());
        // each public static kernel of the class that compiles, by name, sorted; the method that is not a kernel left out
        List<String> rows = r.out().lines().filter(l -> l.startsWith(" ")).map(l -> l.trim().split("\\s+")[0]).toList();
        assertEquals(List.of("UsersKernels.halve", "UsersKernels.momentumUpTo", "UsersKernels.saxpy", "scale"), rows, r.out());
        assertTrue(r.out().contains("# not timed: UsersKernels.pairSums: it uses barriers, group-local memory or warps"), r.out());
        assertTrue(!r.out().contains("UsersKernels.main") && !r.out().contains("UsersKernels.describe"), r.out());
        for (String row : r.out().lines().filter(l -> l.startsWith(" UsersKernels.")).toList()) {
            String[] cells = row.trim().split("\\s+");
            assertTrue(Double.parseDouble(cells[cells.length - 5]) > 0 && cells[cells.length - 2].endsWith("%"), row);
        }
        CliRun one = CliRun.of("compare", "--forms", "jvm", "--kernels", UsersKernels.class.getName() + "#saxpy", "--cpu-size", "64K",
                "--warmup", "1", "--iters", "2");
        assertEquals(0, one.exitCode(), one.err());
        assertEquals(1, one.out().lines().filter(l -> l.startsWith(" UsersKernels.")).count(), one.out());
    }

    /**
     * A user's kernel with boolean, char, byte and short scalars runs in every form (each is passed
     * as its own Java type); a form that fails on a kernel fails the command (exit 1), the reason
     * under its row saying whose failure it was.
     */
    @Test
    void compareRunsNarrowScalarsAndFailsWhenAFormFails() {
        CliRun r = CliRun.of("compare", "--forms", "opencl,jvm", "--kernels", UsersOddKernels.class.getName() + "#narrowScalars",
                "--cpu-size", "64K", "--warmup", "1", "--iters", "2");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        String row = r.out().lines().filter(l -> l.startsWith(" UsersOddKernels.narrowScalars")).findFirst().orElseThrow();
        assertTrue(!row.contains("failed"), r.out());
        CliRun bad = CliRun.of("compare", "--forms", "opencl,jvm", "--kernels", UsersOddKernels.class.getName() + "#dividesByZero",
                "--cpu-size", "64K", "--warmup", "1", "--iters", "2");
        assertEquals(1, bad.exitCode(), bad.out() + bad.err());
        assertTrue(bad.out().contains("# FAILED: ") && bad.out().contains("/ by zero"), bad.out());
        if (bad.out().contains("opencl (generated), UsersOddKernels.dividesByZero:")) { // where OpenCL runs here
            assertTrue(bad.out().contains("the reference, the kernel's Java method, threw ArithmeticException"), bad.out());
        }
    }

    @Test
    void compareRefusesKernelClassesItCannotUse(@TempDir Path dir) {
        CliRun missing = CliRun.of("compare", "--forms", "jvm", "--kernels", "com.example.NoSuchKernels");
        assertEquals(2, missing.exitCode(), missing.out());
        assertTrue(missing.err().contains("kernel class 'com.example.NoSuchKernels' not found on the class path"), missing.err());
        CliRun notAKernel = CliRun.of("compare", "--forms", "jvm", "--kernels", UsersKernels.class.getName() + "#describe");
        assertEquals(2, notAKernel.exitCode(), notAKernel.out());
        assertTrue(notAKernel.err().contains("no public static void method describe in " + UsersKernels.class.getName()), notAKernel.err());
        CliRun groups = CliRun.of("compare", "--forms", "jvm", "--kernels", UsersKernels.class.getName() + "#pairSums");
        assertEquals(2, groups.exitCode(), groups.out());
        assertTrue(groups.err().contains("not a kernel gradsync compiles: UsersKernels.pairSums: it uses barriers"), groups.err());
        CliRun noPath = CliRun.of("compare", "--forms", "jvm", "--kernels", "scale", "--class-path", dir.resolve("absent.jar").toString());
        assertEquals(2, noPath.exitCode(), noPath.out());
        assertTrue(noPath.err().contains("--class-path: no file or folder " + dir.resolve("absent.jar")), noPath.err());
    }

    @Test
    void compareTimesInReverseOrderOnRequestAndRefusesAnUnknownOrder() {
        CliRun r = CliRun.of("compare", "--forms", "jvm", "--kernels", "average2,scale,sumInto", "--cpu-size", "256K",
                "--warmup", "1", "--iters", "3", "--order", "reverse");
        assertEquals(0, r.exitCode(), r.err());
        List<String> rows = r.out().lines().filter(l -> l.startsWith(" ")).map(l -> l.trim().split("\\s+")[0]).toList();
        assertEquals(List.of("sumInto", "scale", "average2"), rows, r.out());
        assertTrue(r.out().contains("3 kernels in reverse order"), r.out());
        CliRun bad = CliRun.of("compare", "--forms", "jvm", "--kernels", "average2", "--order", "random");
        assertEquals(2, bad.exitCode(), bad.out());
        assertTrue(bad.err().contains("--order must be table or reverse, got 'random'"), bad.err());
    }

    @Test
    void compareFillsGradientLikeDataOnRequestAndRefusesAnUnknownKind() {
        CliRun r = CliRun.of("compare", "--forms", "jvm", "--kernels", "average7F16,sumOfSquaresBf16", "--cpu-size", "256K",
                "--warmup", "1", "--iters", "3", "--data", "normal");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("2 kernels, normal data"), r.out());
        List<String> rows = r.out().lines().filter(l -> l.startsWith(" ")).map(l -> l.trim().split("\\s+")[0]).toList();
        assertEquals(List.of("average7F16", "sumOfSquaresBf16"), rows, r.out());
        CliRun bad = CliRun.of("compare", "--forms", "jvm", "--kernels", "average2", "--data", "gaussian");
        assertEquals(2, bad.exitCode(), bad.out());
        assertTrue(bad.err().contains("--data must be uniform or normal, got 'gaussian'"), bad.err());
    }

    @Test
    void compareRefusesAnUnknownForm() {
        CliRun r = CliRun.of("compare", "--forms", "jvm,cuda", "--kernels", "average2");
        assertEquals(2, r.exitCode(), r.out());
        assertTrue(r.err().contains("--forms: unknown form 'cuda' (ptx, nvcc, opencl, jvm)"), r.err());
    }
}
