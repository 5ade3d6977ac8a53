package io.gradsync.cli;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gradsync.bench.Messages;
import io.gradsync.bench.AllReduceReference;
import io.gradsync.bench.BackendDevices;
import io.gradsync.bench.BenchCollective;
import io.gradsync.bench.BenchPlot;
import io.gradsync.bench.BenchReport;
import io.gradsync.bench.LinkBound;
import io.gradsync.bench.LinkProbe;
import io.gradsync.bench.MachineInfo;
import io.gradsync.bench.ModelBench;
import io.gradsync.bench.ModelTable;
import io.gradsync.bench.Sizes;
import io.gradsync.bench.SyncBench;
import io.gradsync.bench.SyncMeasurement;
import io.gradsync.bench.SyncTable;
import io.gradsync.bench.Warmup;
import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.backend.Backends;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.bucket.GradientBuckets;
import io.gradsync.sync.bucket.MixedModel;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Sync throughput per backend, size and dtype, as nccl-tests tables. */
@Command(name = "bench", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        description = "Measure gradient-sync throughput: each backend averages replicas of the given sizes, "
                + "checked against a float64 average (#wrong), timed over repeated calls (median, min-max). "
                + "Several backends run side by side over the same sizes, dtypes and device count, each on its own "
                + "runtime (opencl on OpenCL devices, ptx and nccl on CUDA GPUs, cpu on --runtime); a summary names "
                + "the fastest per size. With --reference, another program's all-reduce (PyTorch's NCCL from "
                + "bench/scripts/torch_allreduce.py, nccl-tests) measured in the same session is set beside each backend, "
                + "size by size. With --model mixed, a model of hundreds of mixed-size tensors is synchronized "
                + "through gradient buckets instead and compared with one flat buffer of the same size (goal: buckets "
                + "reach >= 95%% of its throughput).",
        footer = {"", "Examples:",
            "  gradsync bench --backend cpu --devices 4 --sizes 1M,16M,256M",
            "  gradsync bench --backend all --devices 4 --json bench.json --plot bench.png",
            "  gradsync bench --backend all --sizes 1M..1G --dtype fp32,bf16 --json gpus.json --plot gpus.png",
            "  gradsync bench --backend cpu,opencl --devices 2 --dtype fp32,bf16 --no-bounds",
            "  gradsync bench --runtime jvm --devices 3 --sizes 64K,1M --iters 50",
            "  gradsync bench --backend all --sizes 1M..1G --reference torch.txt --plot vs-torch.png",
            "  gradsync bench --backend all --model mixed --model-size 256M --tensors 300 --bucket 25M --json buckets.json",
            "  gradsync bench --backend ptx,nccl --collective all --sizes 1M..1G --json collectives.json --plot collectives.png",
            "", "On PoCL, OpenCL shows one CPU device unless POCL_DEVICES lists several (scripts/gradsync sets as many as --devices, 4 by default)."})
final class BenchCommand implements Callable<Integer> {

    @Option(names = "--backend", defaultValue = "auto", paramLabel = "LIST",
            description = "Backends, comma separated: single, cpu, ptx, opencl, nccl, auto, or 'all' for every backend "
                    + "that averages this many devices (single alone with --devices 1, every other one with more); "
                    + "those that cannot run here print one 'skipped: reason' line (default: ${DEFAULT-VALUE}).")
    String backends;

    @Option(names = "--devices", paramLabel = "N",
            description = "Replicas, one per device (default: every CUDA GPU, else 4 JVM devices).")
    Integer devices;

    @Option(names = "--runtime", defaultValue = "auto", paramLabel = "RUNTIME",
            description = "Devices for the backends that run anywhere (cpu, single): cuda, opencl, jvm or auto "
                    + "(CUDA when present, else JVM) (default: ${DEFAULT-VALUE}).")
    String runtime;

    @Option(names = "--sizes", defaultValue = "1M,16M,256M", paramLabel = "LIST",
            description = "Bytes per replica, comma separated, with K/M/G suffixes; FROM..TO for FROM and its doublings up to TO (default: ${DEFAULT-VALUE}).")
    String sizes;

    @Option(names = "--dtype", defaultValue = "fp32", paramLabel = "LIST",
            description = "Element types, comma separated: fp32, bf16, fp16 (default: ${DEFAULT-VALUE}).")
    String dtypes;

    @Option(names = "--collective", defaultValue = "all-reduce", paramLabel = "LIST",
            description = "Collectives, comma separated: all-reduce (the average), reduce-scatter, all-gather, broadcast "
                    + "(from replica 0), or 'all'; each gets its own table, busbw by nccl-tests' factor for it: 2(n-1)/n, (n-1)/n, "
                    + "(n-1)/n, 1 (default: ${DEFAULT-VALUE}).")
    String collectives;

    @Option(names = "--warmup", defaultValue = "3", paramLabel = "N", description = "Untimed calls per size, at least (default: ${DEFAULT-VALUE}). In one process the "
                    + "warm-up also lasts at least 0.3 s and then until the calls stop getting faster (at most 5 s more), so that "
                    + "the JIT has compiled the call path before timing starts; processes of one collective warm up with at least 2 GiB of calls instead (the same count on every rank).")
    int warmup;

    @Option(names = "--iters", defaultValue = "20", paramLabel = "N", description = "Timed calls per size (default: ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--model", paramLabel = "NAME", description = "Instead of the --sizes sweep: a synthetic model, "
            + "'mixed' (--tensors tensors of log-uniform sizes from 1 element up, about a quarter of the bytes in one embedding), "
            + "synchronized through gradient buckets (markReady in backward order, then finish; and synchronize) against "
            + "one flat buffer of the same size, per backend and dtype.")
    String model;

    @Option(names = "--model-size", defaultValue = "256M", paramLabel = "SIZE",
            description = "--model: bytes of the model per replica (default: ${DEFAULT-VALUE}).")
    String modelSize;

    @Option(names = "--tensors", defaultValue = "" + MixedModel.DEFAULT_TENSORS, paramLabel = "N",
            description = "--model: tensors in the model (default: ${DEFAULT-VALUE}).")
    int tensors;

    @Option(names = "--bucket", defaultValue = "25M", paramLabel = "SIZE",
            description = "--model: largest gradient bucket; a larger tensor gets one of its own (default: ${DEFAULT-VALUE}).")
    String bucket;

    @Option(names = "--norm", negatable = false, description = "--model: the bucketed forms also compute the global "
            + "gradient norm and the finite check (in the averaging pass on cpu and ptx, a second pass over the buckets on "
            + "opencl and nccl), to show what they cost against the flat buffer (which only averages).")
    boolean norm;

    @Option(names = "--model-seed", defaultValue = "1", paramLabel = "N",
            description = "--model: seed of the tensor sizes; the same seed gives the same model anywhere (default: ${DEFAULT-VALUE}).")
    long modelSeed;

    @Option(names = "--no-check", negatable = false, description = "Skip the float64 check (#wrong shows N/A).")
    boolean noCheck;

    @Option(names = "--profile", negatable = false, description = "After each row (with --model, each table: per form), print where the time went (per-phase means).")
    boolean profile;

    // each backend's tuning options, in its own mixin, which makes that backend's options record
    @Mixin
    CpuOptionsMixin cpuOptions;
    @Mixin
    PtxOptionsMixin ptxOptions;
    @Mixin
    OpenClOptionsMixin openClOptions;
    @Mixin
    NcclOptionsMixin ncclOptions;

    @Option(names = "--share-gpus", negatable = false, description = "Where there are fewer GPUs (CUDA or OpenCL) than "
            + "--devices, the replicas share them as logical devices: the N-replica schedules run, but no byte crosses between GPUs, "
            + "so the figures are the schedules' and their overheads, not the links'.")
    boolean shareGpus;

    @Option(names = "--no-caller-wait", negatable = false, description = "Every backend: skip the device-wide wait "
            + "for work queued before each call (the bench queues none; a training loop whose device work has finished, "
            + "as after ExecutionPlan.execute, can skip it too): shows what that wait costs small calls.")
    boolean noCallerWait;

    @Option(names = "--wire", defaultValue = "fp32", paramLabel = "TYPES", description = "Every backend: the type fp32 "
            + "gradients cross between replicas as in the average and the reduce-scatter: fp32 (as they are), bf16 or fp16 (half "
            + "the bytes; each value and the average rounded to it; #wrong then counts against that rounding). Several, comma-"
            + "separated (fp32,bf16), time each in turn and print the speed-up over the first (default: ${DEFAULT-VALUE}).")
    String wire;

    @Option(names = "--json", paramLabel = "FILE", description = "Write every figure, the skipped backends, the link bounds "
            + "and the machine (devices, driver, NCCL, JVM) as JSON (schema: gradsync-bench.schema.json).")
    Path json;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Draw busbw against size, one line per backend, "
            + "link bounds dashed, as a PNG.")
    Path plot;

    @Option(names = "--reference", paramLabel = "FILE[=LABEL]", description = "Another program's all-reduce to set "
            + "beside ours: the first nccl-tests style table in FILE (a bench/scripts/torch_allreduce.py log: its per-call "
            + "time and busbw), matched by size. After the summary, per size and backend: our busbw, its busbw, the ratio "
            + "and the time difference per call; plotted dotted; under \"references\" in the JSON. LABEL defaults to "
            + "'" + AllReduceReference.TORCH_LABEL + "' for a torch_allreduce.py log, else the file name. Repeatable.")
    List<String> referenceSpecs = new ArrayList<>();

    @Option(names = "--no-bounds", negatable = false, description = "Skip measuring the link bounds (pinned copies, peer, device copy).")
    boolean noBounds;

    @Option(names = "--no-progress", negatable = false, description = "No progress bar (it is off anyway when stderr is not a terminal).")
    boolean noProgress;

    @Spec
    CommandSpec spec;

    /** --bucket in bytes, once checked. */
    private long bucketBytes = GradientBuckets.DEFAULT_BUCKET_BYTES;

    @Override
    public Integer call() {
        // Multi-process (torchrun, scripts/gradsync-multiproc): one GPU per process, rank 0 prints.
        RendezvousConfig launch = RendezvousConfig.isLaunched() ? RendezvousConfig.fromEnvironment() : null;
        PrintStream out = launch == null || launch.rank() == 0 ? System.out : new PrintStream(OutputStream.nullOutputStream());
        // Every input is checked before any device is touched: a typo costs nothing.
        if (warmup < 0 || iterations < 1) {
            throw Usage.error(spec, "--warmup must be >= 0 and --iters >= 1, got " + warmup + " and " + iterations);
        }
        DeviceRuntime rt = requireRuntime(spec, runtime);
        int n = launch != null ? 1 : devices != null ? devices : defaultDeviceCount(spec, rt);
        if (n < 1) {
            throw Usage.error(spec, "--devices must be at least 1, got " + n);
        }
        List<DType> types = Usage.parse(spec, () -> parseTypes(dtypes));
        List<BenchCollective> ops = Usage.parse(spec, () -> parseCollectives(collectives));
        List<MixedModel> models = Usage.parse(spec, () -> models(types)); // empty: the --sizes sweep
        List<Long> sizeList = models.isEmpty() ? Usage.parse(spec, "--sizes", () -> Sizes.parseList(sizes)) : List.of(models.getFirst().totalBytes());
        for (long size : sizeList) {
            for (DType t : types) {
                if (size < t.bytes()) {
                    throw Usage.error(spec, "--sizes: " + size + " B holds no " + t.label() + " element");
                }
            }
        }
        SyncOptions options = Usage.parse(spec, this::options);
        List<DType> wires = Usage.parse(spec, () -> parseWires(wire));
        List<SyncBackend> chosen = Usage.parse(spec, () -> chooseBackends(backends, n));
        if (plot != null && plot.toString().isEmpty()) {
            throw Usage.error(spec, "--plot needs a file name, got ''");
        }
        if (plot != null && !plot.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".png")) {
            throw Usage.error(spec, "--plot: '" + plot + "' does not end in .png");
        }
        List<AllReduceReference> references = Usage.parse(spec, this::references);
        if (json != null) {
            Preflight.writableFile(spec, "--json", json);
        }
        if (plot != null) {
            Preflight.writableFile(spec, "--plot", plot);
        }
        checkMemory(n, sizeList, chosen, options.withWire(wires.stream().filter(w -> w != DType.FP32).findFirst().orElse(DType.FP32)));

        BenchReport report = new BenchReport();
        references.forEach(report::addReference);
        if (!models.isEmpty() && !ops.equals(List.of(BenchCollective.ALL_REDUCE))) {
            throw Usage.error(spec, "--model times the bucketed average; --collective goes with the --sizes sweep");
        }
        int stepsPerBackend = wires.size() * (models.isEmpty() ? types.size() * sizeList.size() * ops.size() : models.size());
        try (BackendDevices pool = launch != null ? null : new BackendDevices(rt, n, shareGpus);
             ProgressBar bar = progressBar(chosen.size() * stepsPerBackend)) {
            if (bar != null) {
                out = clearingBar(out);
            }
            SyncTable table = new SyncTable(out);
            ModelTable modelTable = new ModelTable(out);
            out.printf(Locale.ROOT, "# gradsync bench: %d device%s per backend, %s, %s, warmup %s, iters %d, Java %s%n", n,
                    n == 1 ? "" : "s", models.isEmpty() ? "sizes " + sizes : "model mixed " + Sizes.format(sizeList.getFirst()),
                    dtypes, Warmup.describe(launch == null || launch.worldSize() == 1, warmup), iterations, Runtime.version());
            if (launch != null) {
                out.printf(Locale.ROOT, "# %d processes (WORLD_SIZE), one GPU each; rank 0's timings%n", launch.worldSize());
            }
            long wrongTotal = 0;
            for (SyncBackend backend : chosen) {
                List<? extends Device> selected;
                try {
                    selected = launch != null ? List.of(CudaRuntime.device(launch.localRank())) : pool.devicesFor(backend);
                } catch (IllegalArgumentException | IllegalStateException | UnsupportedOperationException e) {
                    skip(out, report, backend, e, bar, stepsPerBackend);
                    continue;
                }
                for (DType wireType : wires) {
                GradientSynchronizer created;
                try {
                    created = Synchronizers.create(backend, selected, options.withWire(wireType));
                } catch (UnsupportedOperationException | IllegalArgumentException e) {
                    skip(out, report, backend, e, bar, stepsPerBackend / wires.size());
                    continue;
                }
                try (GradientSynchronizer sync = created) {
                    if (BackendDevices.sharing(selected)) {
                        out.println("# " + backend.label() + ": " + selected.size() + " logical devices share " + selected.stream()
                                .map(d -> d.id().replaceAll("#.*", "")).distinct().count() + " GPU(s): schedule and overhead figures only");
                    }
                    String title = "backend " + sync.backend().label() + " (" + backend.label() + "), " + sync.worldSize() + " x "
                            + selected.getFirst().runtime().label() + " (" + selected.getFirst().name() + "), "
                            + (wireType == DType.FP32 ? "" : wireType.label() + " wire, ");
                    for (MixedModel m : models) {
                        long seed = launch != null ? 31 * m.totalBytes() + m.dtype().ordinal() : ThreadLocalRandom.current().nextLong();
                        List<String> profiles = new ArrayList<>();
                        ModelBench.Result r = ModelBench.measure(sync, selected, m, bucketBytes, norm, warmup, iterations, !noCheck, seed,
                                profile ? profiles::add : null);
                        modelTable.print(title + m.dtype().label(), r, m.largest().name());
                        for (String line : profiles) {
                            out.println("#   profile, " + line);
                        }
                        report.add(r);
                        wrongTotal += Math.max(0, r.wrong());
                        if (bar != null) {
                            bar.step();
                        }
                    }
                    for (DType dtype : models.isEmpty() ? types : List.<DType>of()) { // the --sizes sweep, unless --model
                      for (BenchCollective op : ops) {
                        if (wireType != DType.FP32 && (dtype != DType.FP32 || !op.sums())) {
                            if (bar != null) {
                                bar.stepBy(sizeList.size()); // nothing crosses the wire: timed with the others
                            }
                            continue;
                        }
                        table.header(title + dtype.label() + (ops.size() > 1 || op != BenchCollective.ALL_REDUCE ? ", " + op.label() : ""));
                        for (long size : sizeList) {
                            long seed = launch != null ? 31 * size + dtype.ordinal() : ThreadLocalRandom.current().nextLong(); // ranks agree
                            SyncMeasurement m = SyncBench.measure(sync, selected, op, size, dtype, wireType, warmup, iterations,
                                    !noCheck, seed);
                            table.row(m);
                            report.add(m);
                            if (profile) {
                                out.println("#   profile: " + sync.stats().describe());
                            }
                            wrongTotal += Math.max(0, m.wrong());
                            if (bar != null) {
                                bar.step();
                            }
                        }
                      }
                    }
                }
                }
            }
            if (pool != null && !noBounds) {
                measureBounds(out, report, pool, sizeList);
            }
            printSummary(out, report);
            if (wires.size() > 1) {
                printWires(out, report, wires.getFirst());
            }
            for (AllReduceReference ref : report.references()) {
                printAgainst(out, report, ref);
            }
            modelTable.summary(report.models());
            out.println("# Out of bounds values : " + wrongTotal + (wrongTotal == 0 ? " OK" : " FAILED"));
            if (launch == null || launch.rank() == 0) {
                writeFiles(report, pool, n, sizeList, types, models);
            }
            if (report.isEmpty()) {
                throw new IllegalStateException("no backend could run here: " + report.skipped().stream()
                        .map(s -> s.backend() + " (" + s.reason() + ")").collect(Collectors.joining("; ")));
            }
            return wrongTotal == 0 ? 0 : 1;
        }
    }

    private static void skip(PrintStream out, BenchReport report, SyncBackend backend, RuntimeException e, ProgressBar bar, int steps) {
        String reason = Messages.firstLine(e);
        out.println("# " + backend.label() + ": skipped: " + reason);
        report.skip(backend.label(), reason);
        if (bar != null) {
            bar.stepBy(steps);
        }
    }

    /**
     * Before anything is allocated: per replica the largest size lives on its device and twice on
     * the host (its input and the float64 check), JVM devices' memory is host memory, and cpu adds
     * its pinned staging rings (one per device and the result's).
     */
    private void checkMemory(int n, List<Long> sizeList, List<SyncBackend> chosen, SyncOptions options) {
        long largest = sizeList.stream().mapToLong(Long::longValue).max().orElse(0);
        long host = Preflight.times(Preflight.times(largest, n), 3);
        if (chosen.contains(SyncBackend.CPU) || chosen.contains(SyncBackend.AUTO)) {
            host = Math.max(host, Preflight.times(Preflight.times(options.cpu().chunkBytes(), options.cpu().slots()), n + 1));
        }
        Preflight.fits(spec, "--sizes " + Sizes.format(largest) + " on " + n + " devices", host,
                Preflight.times(largest, 2), DeviceCatalog.gpus(DeviceRuntime.CUDA));
    }

    /** The links under each runtime used; each becomes a dashed ceiling in the plot. */
    private void measureBounds(PrintStream out, BenchReport report, BackendDevices pool, List<Long> sizeList) {
        long largest = sizeList.stream().mapToLong(Long::longValue).max().orElse(1L << 20);
        long bytes = Math.max(1L << 20, Math.min(largest, 256L << 20)); // big enough to be bandwidth-bound, quick
        for (var e : pool.selected().entrySet()) {
            String rt = e.getKey().label();
            if (!report.measuredOn(rt)) {
                continue; // no backend ran on these devices: their links bound nothing shown
            }
            try {
                List<LinkProbe.Link> links = LinkProbe.measure(e.getValue(), bytes, 5);
                out.printf(Locale.ROOT, "# link bounds, %s (%s per copy, median of 5):%n", e.getKey().label(), Sizes.format(bytes));
                for (LinkBound b : LinkBound.from(e.getKey().label(), links, e.getValue().size())) {
                    report.addBounds(List.of(b));
                    out.printf(Locale.ROOT, "#   %-36s %9.1f GB/s%s%n", b.name(), b.gbPerSecond(),
                            Double.isNaN(b.busbwGBs()) ? "" : String.format(Locale.ROOT, "  (busbw bound %.1f GB/s)", b.busbwGBs()));
                }
            } catch (RuntimeException ex) {
                out.println("# link bounds, " + e.getKey().label() + ": not measured: " + ex.getMessage());
            }
        }
    }

    private static void printSummary(PrintStream out, BenchReport report) {
        if (report.rows().stream().map(SyncMeasurement::label).distinct().count() < 2) {
            return;
        }
        out.println("# summary: fastest backend per collective and size (busbw)");
        out.printf(Locale.ROOT, "#%14s %9s %12s %-17s %10s %-17s %10s %8s%n", "collective", "type", "size", "winner", "busbw", "next", "busbw",
                "ratio");
        for (BenchReport.Winner w : report.winners()) {
            var next = report.runnerUp(w);
            out.printf(Locale.ROOT, " %14s %9s %12s %-17s %10.2f %-17s %10s %8s%n", w.collective().label(), w.dtype().label(), Sizes.format(w.bytes()),
                    w.label(), w.busbwGBs(), next.map(SyncMeasurement::label).orElse("-"),
                    next.map(m -> String.format(Locale.ROOT, "%.2f", m.busbwGBs())).orElse("-"),
                    next.map(m -> String.format(Locale.ROOT, "%.2fx", w.busbwGBs() / m.busbwGBs())).orElse("-"));
        }
    }

    /** --wire: the types, each once; an unknown one is named. */
    static List<DType> parseWires(String text) {
        List<DType> out = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            DType t = BackendOptions.prefixed("--wire", () -> DType.parse(part.trim()));
            if (out.contains(t)) {
                throw new IllegalArgumentException("--wire: " + t.label() + " twice");
            }
            out.add(t);
        }
        return out;
    }

    /** Several wires: each fp32 row's time on the first wire over its time on another, per backend, collective and size. */
    private static void printWires(PrintStream out, BenchReport report, DType first) {
        out.println("# wire speed-up: the time with the " + first.label() + " wire / the time with this one (above 1: faster)");
        out.printf(Locale.ROOT, "#%14s %-10s %12s %-6s %10s %10s %8s%n", "collective", "backend", "size", "wire", "time (us)", first.label() + " (us)",
                "speed-up");
        for (SyncMeasurement m : report.rows()) {
            if (m.dtype() != DType.FP32 || !m.collective().sums() || m.wire() == first) {
                continue;
            }
            report.rows().stream().filter(b -> b.dtype() == DType.FP32 && b.wire() == first && b.backend() == m.backend()
                    && b.collective() == m.collective() && b.bytes() == m.bytes() && b.runtime().equals(m.runtime())).findFirst()
                    .ifPresent(b -> out.printf(Locale.ROOT, " %14s %-10s %12s %-6s %10.1f %10.1f %7.2fx%n", m.collective().label(),
                            m.backend().label(), Sizes.format(m.bytes()), m.wire().label(), m.medianMicros(), b.medianMicros(),
                            b.medianMicros() / m.medianMicros()));
        }
    }

    /** Our rows beside the reference's, size by size: the figures the issues' goals are stated in. */
    private static void printAgainst(PrintStream out, BenchReport report, AllReduceReference ref) {
        List<BenchReport.Comparison> rows = report.compare(ref);
        if (rows.isEmpty()) {
            out.println("# against " + ref.label() + ": no size and type measured by both (it has " + ref.type() + " at "
                    + ref.rows().stream().map(r -> Sizes.format(r.bytes())).collect(Collectors.joining(",")) + ")");
            return;
        }
        out.println("# against " + ref.label() + " (" + ref.file() + ", " + ref.type() + "; time diff = ours - its, per call)");
        out.printf(Locale.ROOT, "#%9s %12s %-10s %10s %10s %8s %10s%n", "type", "size", "backend", "busbw", "ref busbw", "ratio", "time diff");
        out.printf(Locale.ROOT, "#%9s %12s %-10s %10s %10s %8s %10s%n", "", "", "", "(GB/s)", "(GB/s)", "", "(us)");
        for (BenchReport.Comparison c : rows) {
            double ratio = c.busbwRatio();
            out.printf(Locale.ROOT, " %9s %12s %-10s %10.2f %10.2f %8s %+10.1f%n", c.ours().dtype().label(),
                    Sizes.format(c.ours().bytes()), c.ours().backend().label(), c.ours().busbwGBs(), c.reference().busbwGBs(),
                    Double.isNaN(ratio) ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * ratio), c.timeDiffUs());
        }
    }

    /** --reference, each file read and its table found now, so a wrong path fails before anything is measured. */
    private List<AllReduceReference> references() {
        List<AllReduceReference> list = new ArrayList<>();
        for (String spec : referenceSpecs) {
            AllReduceReference r = BackendOptions.prefixed("--reference", () -> AllReduceReference.parse(spec));
            if (list.stream().anyMatch(o -> o.label().equals(r.label()))) { // labels name the plot's lines
                throw new IllegalArgumentException("--reference: two references labelled '" + r.label()
                        + "'; give each its own as FILE=LABEL");
            }
            list.add(r);
        }
        return list;
    }

    /** @param sizeList and {@code types} as parsed and checked for the run */
    private void writeFiles(BenchReport report, BackendDevices pool, int n, List<Long> sizeList, List<DType> types, List<MixedModel> models) {
        if (json != null) {
            ObjectNode settings = JsonNodeFactory.instance.objectNode();
            settings.put("backends", backends);
            settings.put("devices", n);
            settings.put("preferredRuntime", pool == null ? "cuda" : pool.preferred().label());
            settings.put("warmup", warmup);
            settings.put("iterations", iterations);
            settings.put("collectives", collectives);
            settings.put("wire", wire);
            settings.put("check", !noCheck);
            settings.put("callerWait", !noCallerWait);
            var sz = settings.putArray("sizes");
            sizeList.forEach(sz::add);
            var ty = settings.putArray("dtypes");
            types.forEach(t -> ty.add(t.label()));
            if (!models.isEmpty()) {
                settings.putObject("model").put("name", "mixed").put("bytes", models.getFirst().totalBytes()).put("tensors", tensors)
                        .put("bucketBytes", bucketBytes).put("seed", modelSeed).put("norm", norm);
            }
            var machine = MachineInfo.describe(pool == null ? List.of() : pool.selected().values());
            BenchReport.write(report.toJson(machine, settings), json);
            System.out.println("# wrote " + json);
        }
        if (plot != null && !report.rows().isEmpty()) {
            BenchPlot.write(report, "gradsync bench: busbw, " + n + " replicas", plot);
            System.out.println("# wrote " + plot);
        }
    }

    /** A progress bar on stderr for long sweeps, only where a person watches a terminal. */
    private ProgressBar progressBar(int steps) {
        java.io.Console console = System.console();
        if (noProgress || steps < 2 || console == null || !console.isTerminal()) {
            return null;
        }
        return new ProgressBarBuilder().setTaskName("bench").setInitialMax(steps).setUpdateIntervalMillis(250)
                .setConsumer(new ConsoleProgressBarConsumer(System.err)).build();
    }

    /**
     * The bar and the tables share one terminal: each line printed first erases the bar's line
     * (carriage return, erase line on stderr) so the table stays readable; the bar redraws below.
     */
    private static PrintStream clearingBar(PrintStream target) {
        return new PrintStream(new OutputStream() {
            private boolean lineStart = true;

            @Override
            public void write(int b) {
                if (lineStart) {
                    System.err.print("\r\033[K");
                    System.err.flush();
                    lineStart = false;
                }
                target.write(b);
                if (b == '\n') {
                    target.flush();
                    lineStart = true;
                }
            }

            @Override
            public void flush() {
                target.flush();
            }
        }, true);
    }

    static List<BenchCollective> parseCollectives(String text) {
        Set<BenchCollective> ops = new LinkedHashSet<>();
        for (String c : Usage.items("--collective", text)) {
            if (c.equalsIgnoreCase("all")) {
                ops.addAll(List.of(BenchCollective.values()));
            } else {
                ops.add(BackendOptions.prefixed("--collective", () -> BenchCollective.parse(c)));
            }
        }
        return List.copyOf(ops);
    }

    static List<DType> parseTypes(String text) {
        List<DType> types = new ArrayList<>();
        for (String t : Usage.items("--dtype", text)) {
            types.add(BackendOptions.prefixed("--dtype", () -> DType.parse(t)));
        }
        return types;
    }

    /**
     * The --model, one per dtype (their byte sizes agree up to element rounding), or none for the
     * size sweep; also checks the options that go with it.
     */
    private List<MixedModel> models(List<DType> types) {
        var parsed = spec.commandLine().getParseResult();
        if (model == null) {
            for (String option : List.of("--model-size", "--tensors", "--bucket", "--model-seed", "--norm")) {
                if (parsed.hasMatchedOption(option)) {
                    throw new IllegalArgumentException(option + " goes with --model mixed");
                }
            }
            return List.of();
        }
        if (!model.trim().equalsIgnoreCase("mixed")) {
            throw new IllegalArgumentException("--model: unknown model '" + model + "'; valid: mixed");
        }
        if (parsed.hasMatchedOption("--sizes")) {
            throw new IllegalArgumentException("--sizes and --model exclude each other: the model's size is --model-size");
        }
        if (!referenceSpecs.isEmpty()) {
            throw new IllegalArgumentException("--reference sets the --sizes sweep beside another all-reduce; with --model it has nothing to compare");
        }
        if (plot != null) {
            throw new IllegalArgumentException("--plot draws the --sizes sweep; with --model use --json");
        }
        if (tensors < 1) {
            throw new IllegalArgumentException("--tensors must be at least 1, got " + tensors);
        }
        long total = BackendOptions.prefixed("--model-size", () -> Sizes.parse(modelSize));
        long cap = BackendOptions.prefixed("--bucket", () -> Sizes.parse(bucket));
        if (cap < GradientBuckets.ALIGN_BYTES) {
            throw new IllegalArgumentException("--bucket must be at least " + GradientBuckets.ALIGN_BYTES + " B, got " + bucket);
        }
        bucketBytes = cap;
        List<MixedModel> list = new ArrayList<>();
        for (DType t : types) {
            list.add(BackendOptions.prefixed("--model-size", () -> MixedModel.generate(modelSeed, tensors, total, t)));
        }
        return list;
    }

    private SyncOptions options() {
        SyncOptions o = SyncOptions.defaults();
        for (BackendOptions<?> backend : List.<BackendOptions<?>>of(openClOptions, cpuOptions, ncclOptions, ptxOptions)) {
            o = backend.applyTo(o);
        }
        return noCallerWait ? o.withWaitForCaller(false) : o;
    }

    /** --runtime, parsed and usable here: an unavailable runtime is a usage error saying why. */
    static DeviceRuntime requireRuntime(CommandSpec spec, String text) {
        DeviceRuntime rt = Usage.parse(spec, () -> parseRuntime(text));
        var status = DeviceCatalog.status(rt);
        if (!status.available()) {
            throw Usage.error(spec, "--runtime " + rt.label() + ": unavailable here: " + status.detail());
        }
        return rt;
    }

    static DeviceRuntime parseRuntime(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.equals("auto")) {
            return DeviceCatalog.preferredRuntime();
        }
        for (DeviceRuntime r : DeviceRuntime.values()) {
            if (r.label().equals(t)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown runtime '" + text + "'; valid: cuda, opencl, jvm, auto");
    }

    /** Without --devices: every device of the runtime (4 JVM devices); none there is a usage error, not "--devices 0". */
    static int defaultDeviceCount(CommandSpec spec, DeviceRuntime rt) {
        int n = rt == DeviceRuntime.JVM ? 4 : DeviceCatalog.listed(rt).size();
        if (n < 1) {
            throw Usage.error(spec, "--runtime " + rt.label() + " lists no devices here; give --devices or another --runtime");
        }
        return n;
    }

    /**
     * 'all' is every backend that can average {@code n} replicas; otherwise the list as given.
     *
     * @throws IllegalArgumentException for an unknown or empty item, or single named for several devices
     */
    static List<SyncBackend> chooseBackends(String text, int n) {
        Set<SyncBackend> chosen = new LinkedHashSet<>();
        for (String part : Usage.items("--backend", text)) {
            if (part.equalsIgnoreCase("all")) {
                for (SyncBackend b : Backends.all().stream().map(p -> p.backend()).toList()) { // the registered ones
                    if ((b == SyncBackend.SINGLE) == (n == 1)) {
                        chosen.add(b);
                    }
                }
            } else {
                SyncBackend b = BackendOptions.prefixed("--backend", () -> SyncBackend.parse(part));
                if (b == SyncBackend.SINGLE && n != 1) { // asked for by name: a usage error, not a skipped backend
                    throw new IllegalArgumentException("--backend " + part + " takes exactly one device, got " + n
                            + "; use --devices 1, or cpu, ptx, opencl or nccl to average several");
                }
                chosen.add(b);
            }
        }
        return List.copyOf(chosen);
    }
}
