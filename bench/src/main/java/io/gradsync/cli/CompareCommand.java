package io.gradsync.cli;

import io.gradsync.bench.Messages;
import io.gradsync.bench.BackendDevices;
import io.gradsync.bench.DeviceForms;
import io.gradsync.bench.JvmForms;
import io.gradsync.bench.KernelCompare;
import io.gradsync.bench.KernelSelection;
import io.gradsync.bench.KernelCompare.Cell;
import io.gradsync.bench.KernelCompare.Repeats;
import io.gradsync.bench.KernelCompare.Variant;
import io.gradsync.bench.NvccReference;
import io.gradsync.bench.Sizes;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.RuntimeStatus;
import io.gradsync.tasks.kernels.KernelFamily;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.opencl.OpenClDevice;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Each built-in kernel as generated PTX, nvcc-built CUDA C, generated OpenCL C and plain Java, side by side. */
@Command(name = "compare", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        description = "Time every built-in kernel in each form: the PTX gradsync generates, an nvcc -O3 build of the same "
                + "kernel in CUDA C (when nvcc is on the PATH), the generated OpenCL C, and the Java method on the JVM. "
                + "Prints effective GB/s and %% of the device's measured copy bandwidth; forms this machine cannot run "
                + "show n/a with the reason. Device forms are timed with device events; median after warm-up. Each "
                + "device form's first launch is checked against the Java method on the same inputs; any difference, "
                + "and any form that fails on a kernel (exit status 1), fails the command.",
        footer = {"", "Examples:",
            "  gradsync compare",
            "  gradsync compare --kernels average4,average4Bf16,sumInto --size 512M",
            "  gradsync compare --cpu-size 4M --iters 5          # quick, on a laptop",
            "  gradsync compare --grid 1056                      # 8 blocks per SM on an H200",
            "  gradsync compare --forms jvm --iters 50           # JVM devices alone",
            "  gradsync compare --forms jvm --data normal        # gradient-like values: the JVM forms' rare paths too",
            "  gradsync compare --kernels com.acme.MyKernels --class-path my.jar   # your kernels beside copy",
            "", "Goals on GPUs: generated PTX >= 97%% of the nvcc build for every kernel (ptx/nvcc column), "
                + "on PTX and OpenCL every element-wise kernel (averages, conversions, copies) >= 95%% and every reduction "
                + ">= 90%% of the device's copy bandwidth. On the JVM: every kernel at least 70%% of a copy of as many "
                + "bytes timed call for call beside it (jvm/copy column)."})
final class CompareCommand implements Callable<Integer> {
    @Option(names = "--kernels", defaultValue = "all", paramLabel = "LIST",
            description = "Kernel names, comma separated, or all (default: ${DEFAULT-VALUE}; see gradsync kernels). A name "
                    + "that is not a built-in is a class of your own: com.acme.MyKernels (each public static kernel in it that gradsync "
                    + "compiles) or com.acme.MyKernels#adamW (that one); on the JVM it runs as a task graph runs it, "
                    + "over whole arrays on every core.")
    String kernels;

    @Option(names = {"--class-path", "-cp"}, paramLabel = "PATH",
            description = "Jars and folders holding the classes named in --kernels, separated by '${sys:path.separator}'.")
    String classPath;

    @Option(names = "--size", defaultValue = "256M", paramLabel = "SIZE",
            description = "Bytes per buffer on GPUs (default: ${DEFAULT-VALUE}); large enough that caches do not help.")
    String size;

    @Option(names = "--cpu-size", defaultValue = "16M", paramLabel = "SIZE",
            description = "Bytes per buffer on the JVM and on CPU OpenCL (PoCL) (default: ${DEFAULT-VALUE}).")
    String cpuSize;

    @Option(names = "--device", defaultValue = "0", paramLabel = "N", description = "CUDA device ordinal (default: ${DEFAULT-VALUE}).")
    int device;

    @Option(names = "--warmup", defaultValue = "3", paramLabel = "N", description = "Untimed launches per variant (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--iters", defaultValue = "30", paramLabel = "N", description = "Timed launches per variant, interleaved with the other forms round by round (default: ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--grid", defaultValue = "0", paramLabel = "BLOCKS",
            description = "Thread blocks (of 256) for the element-wise kernels, the same for every device form; 0: one "
                    + "thread per element (default: ${DEFAULT-VALUE}). Their loops are grid-stride, so any grid is correct; "
                    + "e.g. 8 per SM (1056 on an H200) often beats one thread per element.")
    int grid;

    @Option(names = "--forms", defaultValue = "ptx,nvcc,opencl,jvm", paramLabel = "LIST",
            description = "Forms to time, comma separated, of ptx, nvcc, opencl and jvm (default: ${DEFAULT-VALUE}); "
                    + "the others show n/a. E.g. jvm alone for JVM devices' figures without a GPU's launches between.")
    String forms;

    @Option(names = "--order", defaultValue = "table", paramLabel = "ORDER",
            description = "The order kernels are timed in: table (by name) or reverse (default: ${DEFAULT-VALUE}). On the "
                    + "JVM a kernel's speed can depend on the kernels the JIT compiled before it: reverse shows that.")
    String order;

    @Option(names = "--data", defaultValue = "uniform", paramLabel = "KIND",
            description = "What the arrays hold: uniform (magnitudes 0.5 to 1.5, either sign) or normal (Gaussian, as "
                    + "gradients are: an average's replicas then often lie far apart in magnitude, and the JVM forms' rare "
                    + "paths run) (default: ${DEFAULT-VALUE}).")
    String data;

    @Option(names = "--no-check", negatable = false,
            description = "Skip checking each device form's result against the Java method on the same inputs.")
    boolean noCheck;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        ClassLoader loader = Usage.parse(spec, () -> UserClassPath.loader(classPath, getClass().getClassLoader()));
        if (!kernels.trim().equalsIgnoreCase("all")) {
            Usage.parse(spec, () -> Usage.items("--kernels", kernels)); // a stray comma refused, as bench refuses it
        }
        KernelSelection.Selection selection = Usage.parse(spec, () -> KernelSelection.select(kernels, loader));
        List<KernelSpec> specs = switch (order) {
            case "table" -> selection.specs();
            case "reverse" -> selection.specs().reversed();
            default -> throw Usage.error(spec, "--order must be table or reverse, got '" + order + "'");
        };
        long gpuBytes = Usage.parse(spec, () -> Sizes.parse(size));
        long cpuBytes = Usage.parse(spec, () -> Sizes.parse(cpuSize));
        for (var given : List.of(java.util.Map.entry("--size", gpuBytes), java.util.Map.entry("--cpu-size", cpuBytes))) {
            if (given.getValue() < 8) { // a kernel's widest element
                throw Usage.error(spec, given.getKey() + ": " + given.getValue() + " B holds no element of every kernel (8 B at least)");
            }
        }
        Repeats repeats = Usage.parse(spec, () -> new Repeats(warmup, iterations));
        KernelCompare.Values values = Usage.parse(spec, () -> KernelCompare.Values.parse(data));
        if (grid < 0) {
            throw Usage.error(spec, "--grid must be 0 (one thread per element) or a number of blocks, got " + grid);
        }

        java.util.Set<Variant> selected = Usage.parse(spec, () -> formsOf(forms));

        // Which forms can run here, and on what; the others are n/a for a stated reason.
        Map<Variant, String> unavailable = new EnumMap<>(Variant.class);
        Map<Variant, Device> deviceOf = new EnumMap<>(Variant.class);
        Map<Variant, Long> bytesOf = new EnumMap<>(Variant.class);
        for (Variant v : Variant.values()) {
            if (!selected.contains(v)) {
                unavailable.put(v, "left out by --forms");
            }
        }
        NvccReference nvcc = null;
        RuntimeStatus cuda = selected.contains(Variant.PTX) || selected.contains(Variant.NVCC) ? CudaRuntime.status() : null;
        if (cuda != null && !cuda.available()) {
            unavailable.putIfAbsent(Variant.PTX, "CUDA unavailable: " + cuda.detail());
            unavailable.putIfAbsent(Variant.NVCC, "CUDA unavailable: " + cuda.detail());
        } else if (cuda != null) {
            CudaDevice gpu;
            try {
                gpu = CudaRuntime.device(device);
            } catch (RuntimeException e) {
                throw Usage.error(spec, "--device: " + e.getMessage());
            }
            deviceOf.put(Variant.PTX, gpu);
            bytesOf.put(Variant.PTX, gpuBytes);
            if (selected.contains(Variant.NVCC)) {
                nvcc = NvccReference.find().orElse(null);
                if (nvcc == null) {
                    unavailable.put(Variant.NVCC, "nvcc not on the PATH (set GRADSYNC_NVCC or add CUDA's bin folder)");
                } else {
                    try {
                        nvcc.cubin(gpu.smVersion());
                        deviceOf.put(Variant.NVCC, gpu);
                        bytesOf.put(Variant.NVCC, gpuBytes);
                    } catch (RuntimeException e) {
                        unavailable.put(Variant.NVCC, Messages.firstLine(e));
                    }
                }
            }
        }
        if (selected.contains(Variant.OPENCL)) {
            try {
                OpenClDevice cl = BackendDevices.openCl(1).getFirst();
                deviceOf.put(Variant.OPENCL, cl);
                bytesOf.put(Variant.OPENCL, BackendDevices.isPocl(cl) ? cpuBytes : gpuBytes);
            } catch (RuntimeException e) {
                unavailable.put(Variant.OPENCL, Messages.firstLine(e));
            }
        }
        bytesOf.put(Variant.JVM, cpuBytes);

        out.printf(Locale.ROOT, "# gradsync compare: %d kernels%s, %s data, warmup %d, median of %d, %s%n", specs.size(),
                order.equals("reverse") ? " in reverse order" : "", data, warmup, iterations,
                grid == 0 ? "one thread per element" : grid + " blocks of " + LaunchShape.DEFAULT_BLOCK + " (element-wise kernels)");
        Map<Variant, Double> copy = new EnumMap<>(Variant.class);
        for (Variant v : Variant.values()) {
            if (unavailable.containsKey(v)) {
                out.printf(Locale.ROOT, "# %-20s n/a (%s)%n", v.title() + ":", unavailable.get(v));
                continue;
            }
            try {
                double c = v == Variant.JVM ? JvmForms.jvmCopyBandwidth(bytesOf.get(v), repeats)
                        : copy.containsKey(Variant.PTX) && v == Variant.NVCC ? copy.get(Variant.PTX)
                        : DeviceForms.copyBandwidth(deviceOf.get(v), bytesOf.get(v), repeats);
                copy.put(v, c);
            } catch (RuntimeException e) {
                copy.put(v, Double.NaN);
            }
            Device d = deviceOf.get(v);
            out.printf(Locale.ROOT, "# %-20s %s, %s per buffer, device copy %.1f GB/s (read+write)%n", v.title() + ":",
                    d == null ? "host, " + Runtime.getRuntime().availableProcessors() + " cores" : d.id() + " (" + d.name() + ")",
                    Sizes.format(bytesOf.get(v)), copy.get(v));
        }
        for (String why : selection.leftOut()) {
            out.println("# not timed: " + why);
        }
        out.flush();

        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "#%-27s", "kernel"));
        StringBuilder units = new StringBuilder(String.format(Locale.ROOT, "#%-27s", ""));
        for (Variant v : Variant.values()) {
            head.append(String.format(Locale.ROOT, " %20s", v.title()));
            units.append(String.format(Locale.ROOT, " %20s", "GB/s  %copy"));
        }
        out.println(head.append(String.format(Locale.ROOT, " %9s %9s  %s", "ptx/nvcc", "jvm/copy", "check (vs Java)")));
        out.println(units.append(String.format(Locale.ROOT, " %9s %9s", "", "beside")));
        long wrongTotal = 0;
        int failedForms = 0;
        int ptxGoalMet = 0;
        int ptxCompared = 0;
        Map<Variant, List<String>> belowGoal = new EnumMap<>(Variant.class);
        Map<String, Double> besideCopy = new java.util.LinkedHashMap<>();
        // the copy's own speed beside each kernel: where it moves (twofold between runs on a
        // 2-core machine: bench/RESULTS.md, session 43), so do the ratios
        java.util.DoubleSummaryStatistics copyBeside = new java.util.DoubleSummaryStatistics();
        // inputs of every kernel in host memory kept across kernels (see DeviceForms.HostMemory)
        Map<Long, DeviceForms.HostMemory> hostMemory = new java.util.HashMap<>();
        // the JVM goal's reference, a copy of as many bytes, timed beside each kernel
        JvmForms.OnJvm jvmCopy = null;
        try {
            if (!unavailable.containsKey(Variant.JVM)) {
                jvmCopy = JvmForms.OnJvm.warmedCopy(bytesOf.get(Variant.JVM), repeats);
            }
            for (KernelSpec k : specs) {
                Map<Variant, Cell> cells = new EnumMap<>(Variant.class);
                StringBuilder row = new StringBuilder(String.format(Locale.ROOT, " %-27s", k.name()));
                Map<Variant, Device> onDevices = new EnumMap<>(Variant.class);
                deviceOf.forEach((v, d) -> {
                    if (!unavailable.containsKey(v)) {
                        onDevices.put(v, d);
                    }
                });
                cells.putAll(DeviceForms.onDevices(onDevices, bytesOf, k, grid, repeats, nvcc, !noCheck, values, hostMemory));
                for (Variant v : Variant.values()) {
                    Cell c;
                    if (unavailable.containsKey(v)) {
                        c = Cell.na(unavailable.get(v));
                    } else if (v == Variant.JVM) {
                        try {
                            JvmForms.Beside b = JvmForms.onJvmBeside(k, jvmCopy, bytesOf.get(v), repeats, values);
                            besideCopy.put(k.name(), b.ratio());
                            copyBeside.accept(b.referenceGbPerSecond());
                            c = b.cell();
                        } catch (RuntimeException e) {
                            c = Cell.failed(e);
                        }
                    } else {
                        c = cells.get(v);
                    }
                    cells.put(v, c);
                    row.append(' ').append(cellText(c, copy.getOrDefault(v, Double.NaN), !unavailable.containsKey(v)));
                }
                Cell ptx = cells.get(Variant.PTX);
                Cell ref = cells.get(Variant.NVCC);
                if (ptx.ok() && ref.ok()) {
                    double ratio = ptx.gbPerSecond() / ref.gbPerSecond();
                    ptxCompared++;
                    ptxGoalMet += ratio >= 0.97 ? 1 : 0;
                    row.append(String.format(Locale.ROOT, " %8.1f%%", ratio * 100));
                } else {
                    row.append(String.format(Locale.ROOT, " %9s", "-"));
                }
                Double beside = besideCopy.get(k.name());
                row.append(beside == null ? String.format(Locale.ROOT, " %9s", "-") : String.format(Locale.ROOT, " %8.1f%%", beside * 100));
                List<String> wrong = new ArrayList<>();
                for (var e : cells.entrySet()) {
                    if (e.getValue().wrong() > 0) {
                        wrong.add(e.getKey().name().toLowerCase(Locale.ROOT) + " " + e.getValue().wrong() + " wrong");
                        wrongTotal += e.getValue().wrong();
                    }
                }
                boolean checked = cells.values().stream().anyMatch(c -> c.wrong() >= 0);
                row.append("  ").append(!wrong.isEmpty() ? "WRONG: " + String.join(", ", wrong) : checked ? "ok" : "-");
                for (Variant v : List.of(Variant.PTX, Variant.OPENCL)) {
                    Cell c = cells.get(v);
                    if (c != null && c.ok() && c.gbPerSecond() < deviceGoal(k) * copy.getOrDefault(v, 0.0)) {
                        belowGoal.computeIfAbsent(v, x -> new ArrayList<>()).add(k.name());
                    }
                }
                out.println(row);
                for (var e : cells.entrySet()) { // a form that failed on this kernel alone: the whole reason, below the row
                    if (e.getValue().failed()) {
                        failedForms++;
                    }
                    if (!e.getValue().ok() && !unavailable.containsKey(e.getKey())) {
                        out.println("#   " + e.getKey().title() + ", " + k.name() + ": " + e.getValue().unavailable());
                    }
                }
                out.flush();
            }
        } finally {
            hostMemory.values().forEach(DeviceForms.HostMemory::close);
            if (jvmCopy != null) {
                jvmCopy.close();
            }
        }
        if (ptxCompared > 0) {
            out.printf(Locale.ROOT, "# goal: generated PTX >= 97%% of nvcc -O3: %d of %d kernels%n", ptxCompared == 0 ? 0 : ptxGoalMet, ptxCompared);
        }
        for (Variant v : List.of(Variant.PTX, Variant.OPENCL)) {
            if (copy.containsKey(v) && !unavailable.containsKey(v)) {
                List<String> slow = belowGoal.getOrDefault(v, List.of());
                out.println("# goal: " + v.title() + ", element-wise kernels >= 95% and reductions >= 90% of copy: "
                        + (slow.isEmpty() ? "all" : "not met by " + String.join(", ", slow)));
            }
        }
        if (!besideCopy.isEmpty()) {
            // beside each: the comparison that drift of the host's speed over the table leaves alone
            List<String> slow = besideCopy.entrySet().stream().filter(e -> e.getValue() < JVM_GOAL).map(Map.Entry::getKey).toList();
            var lowest = besideCopy.entrySet().stream().min(Map.Entry.comparingByValue()).orElseThrow();
            out.printf(Locale.ROOT, "# goal: on the JVM, every kernel >= 70%% of copy timed beside it: %s (lowest %s, %.0f%%;"
                    + " the copy beside ran at %.1f-%.1f GB/s)%n",
                    slow.isEmpty() ? "all" : "not met by " + String.join(", ", slow), lowest.getKey(), lowest.getValue() * 100,
                    copyBeside.getMin(), copyBeside.getMax());
        }
        if (wrongTotal > 0) {
            out.println("# FAILED: " + wrongTotal + " elements differ from the Java reference");
        }
        if (failedForms > 0) {
            out.println("# FAILED: " + failedForms + " form" + (failedForms == 1 ? "" : "s") + " of a kernel failed (the reasons are below their rows)");
        }
        out.flush();
        return wrongTotal == 0 && failedForms == 0 ? 0 : 1;
    }

    /**
     * The device goal for {@code k}, a fraction of the device's copy: the averages, conversions and
     * other element-wise kernels move data as a copy does; a reduction also combines across threads.
     */
    private static double deviceGoal(KernelSpec k) {
        return k.family().orElse(null) == KernelFamily.REDUCTIONS ? 0.9 : 0.95;
    }

    /** The JVM goal: every kernel's GB/s at least this fraction of a copy's timed beside it. */
    private static final double JVM_GOAL = 0.7;

    /** The forms named in {@code list} (ptx, nvcc, opencl, jvm). */
    static java.util.Set<Variant> formsOf(String list) {
        java.util.Set<Variant> set = java.util.EnumSet.noneOf(Variant.class);
        for (String name : list.split(",", -1)) {
            String n = name.trim().toLowerCase(Locale.ROOT);
            Variant v = java.util.Arrays.stream(Variant.values()).filter(x -> x.name().toLowerCase(Locale.ROOT).equals(n)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("--forms: unknown form '" + name.trim() + "' (ptx, nvcc, opencl, jvm)"));
            set.add(v);
        }
        return set;
    }

    /** "GB/s %copy" in 20 columns; "n/a" alone where the whole column is unavailable (its reason is above). */
    private static String cellText(Cell c, double copy, boolean columnRuns) {
        if (!c.ok()) {
            return String.format(Locale.ROOT, "%20s", columnRuns ? "failed (see below)" : "n/a");
        }
        return String.format(Locale.ROOT, "%12.2f %6.0f%%", c.gbPerSecond(), c.gbPerSecond() / copy * 100);
    }
}
