package io.gradsync.cli;

import io.gradsync.bench.Sizes;
import io.gradsync.bench.SyncBench;
import io.gradsync.bench.SyncMeasurement;
import io.gradsync.bench.SyncTable;
import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Sync throughput per backend, size and dtype, as nccl-tests tables. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Measure gradient-sync throughput: each backend averages replicas of the given sizes, "
                + "checked against a float64 average (#wrong), timed over repeated calls (median, min-max).",
        footer = {"", "Examples:",
            "  gradsync bench --backend cpu --devices 4 --sizes 1M,16M,256M",
            "  gradsync bench --backend all --devices 2 --dtype fp32,bf16",
            "  gradsync bench --runtime jvm --devices 3 --sizes 64K,1M --iters 50"})
final class BenchCommand implements Callable<Integer> {

    @Option(names = "--backend", defaultValue = "auto", paramLabel = "LIST",
            description = "Backends, comma separated, or 'all' for every backend usable here (default: ${DEFAULT-VALUE}).")
    String backends;

    @Option(names = "--devices", paramLabel = "N",
            description = "Replicas, one per device (default: every CUDA GPU, else 4 JVM devices).")
    Integer devices;

    @Option(names = "--runtime", defaultValue = "auto", paramLabel = "RUNTIME",
            description = "Devices to use: cuda, opencl, jvm or auto (CUDA when present, else JVM) (default: ${DEFAULT-VALUE}).")
    String runtime;

    @Option(names = "--sizes", defaultValue = "1M,16M,256M", paramLabel = "LIST",
            description = "Bytes per replica, comma separated, with K/M/G suffixes (default: ${DEFAULT-VALUE}).")
    String sizes;

    @Option(names = "--dtype", defaultValue = "fp32", paramLabel = "LIST",
            description = "Element types, comma separated: fp32, bf16, fp16 (default: ${DEFAULT-VALUE}).")
    String dtypes;

    @Option(names = "--warmup", defaultValue = "3", paramLabel = "N", description = "Untimed calls per size (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--iters", defaultValue = "20", paramLabel = "N", description = "Timed calls per size (default: ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--no-check", negatable = false, description = "Skip the float64 check (#wrong shows N/A).")
    boolean noCheck;

    @Option(names = "--profile", negatable = false, description = "After each row, print where the time went (per-phase means).")
    boolean profile;

    @Option(names = "--chunk", paramLabel = "SIZE", description = "cpu backend: bytes per pipeline chunk (default: 4M).")
    String chunk;

    @Option(names = "--slots", paramLabel = "N", description = "cpu backend: chunks in flight per device (default: 8).")
    Integer slots;

    @Option(names = "--threads", paramLabel = "N", description = "cpu backend: host reduction threads (default: all cores).")
    Integer threads;

    @Option(names = "--layout-check", paramLabel = "WHEN", description = "nccl, one process per GPU: compare gradient "
            + "layouts across ranks every-call (one tiny extra all-reduce per call) or on-change (default: every-call).")
    String layoutCheck;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "nccl: fail a call that takes longer, "
            + "aborting the communicators (default: 300).")
    Integer timeoutSeconds;

    @Override
    public Integer call() {
        // Multi-process (torchrun, scripts/gradsync-multiproc): one GPU per process, rank 0 prints.
        RendezvousConfig launch = RendezvousConfig.isLaunched() ? RendezvousConfig.fromEnvironment() : null;
        PrintStream out = launch == null || launch.rank() == 0 ? System.out : new PrintStream(OutputStream.nullOutputStream());
        if (warmup < 0 || iterations < 1) {
            throw new IllegalArgumentException("--warmup must be >= 0 and --iters >= 1");
        }
        DeviceRuntime rt = parseRuntime(runtime);
        int n = launch != null ? 1 : devices != null ? devices : defaultDeviceCount(rt);
        if (n < 1) {
            throw new IllegalArgumentException("--devices must be at least 1, got " + n);
        }
        List<Long> sizeList = Sizes.parseList(sizes);
        List<DType> types = new ArrayList<>();
        for (String t : dtypes.split(",")) {
            types.add(DType.parse(t));
        }
        SyncOptions options = options();
        List<SyncBackend> chosen = chooseBackends(backends, n);
        List<? extends Device> selected = launch != null ? List.of(CudaRuntime.device(launch.localRank()))
                : DeviceCatalog.select(rt, n);
        try {
            SyncTable table = new SyncTable(out);
            out.printf(Locale.ROOT, "# gradsync bench: %d x %s (%s), warmup %d, iters %d, Java %s%n", n, rt.label(),
                    selected.getFirst().name(), warmup, iterations, Runtime.version());
            if (launch != null) {
                out.printf(Locale.ROOT, "# %d processes (WORLD_SIZE), one GPU each; rank 0's timings%n", launch.worldSize());
            }
            long wrongTotal = 0;
            for (SyncBackend backend : chosen) {
                try (GradientSynchronizer sync = Synchronizers.create(backend, selected, options)) {
                    for (DType dtype : types) {
                        table.header("backend " + sync.backend().label() + " (" + backend.label() + "), " + sync.worldSize() + " x "
                                + rt.label() + ", " + dtype.label());
                        for (long size : sizeList) {
                            long seed = launch != null ? 31 * size + dtype.ordinal() : ThreadLocalRandom.current().nextLong(); // ranks agree
                            SyncMeasurement m = SyncBench.measure(sync, selected, size, dtype, warmup, iterations,
                                    !noCheck, seed);
                            table.row(m);
                            if (profile) {
                                out.println("#   profile: " + sync.stats().describe());
                            }
                            wrongTotal += Math.max(0, m.wrong());
                        }
                    }
                } catch (UnsupportedOperationException e) {
                    out.println("# " + backend.label() + ": skipped: " + e.getMessage());
                }
            }
            out.println("# Out of bounds values : " + wrongTotal + (wrongTotal == 0 ? " OK" : " FAILED"));
            return wrongTotal == 0 ? 0 : 1;
        } finally {
            if (rt == DeviceRuntime.JVM) {
                selected.forEach(Device::close);
            }
        }
    }

    private SyncOptions options() {
        SyncOptions o = SyncOptions.defaults();
        if (chunk != null) {
            o = o.withChunkBytes(Sizes.parse(chunk));
        }
        if (slots != null) {
            o = o.withSlots(slots);
        }
        if (threads != null) {
            o = o.withThreads(threads);
        }
        if (layoutCheck != null) {
            o = o.withLayoutCheck(switch (layoutCheck.trim().toLowerCase(Locale.ROOT)) {
                case "every-call" -> SyncOptions.LayoutCheck.EVERY_CALL;
                case "on-change" -> SyncOptions.LayoutCheck.ON_CHANGE;
                default -> throw new IllegalArgumentException("--layout-check: '" + layoutCheck
                        + "' is neither every-call nor on-change");
            });
        }
        if (timeoutSeconds != null) {
            if (timeoutSeconds < 1) {
                throw new IllegalArgumentException("--timeout must be at least 1 second, got " + timeoutSeconds);
            }
            o = o.withTimeout(java.time.Duration.ofSeconds(timeoutSeconds));
        }
        return o;
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

    private static int defaultDeviceCount(DeviceRuntime rt) {
        return rt == DeviceRuntime.JVM ? 4 : DeviceCatalog.listed(rt).size();
    }

    /** 'all' is every backend that can average {@code n} replicas; otherwise the list as given. */
    static List<SyncBackend> chooseBackends(String text, int n) {
        Set<SyncBackend> chosen = new LinkedHashSet<>();
        for (String part : text.split(",")) {
            if (part.trim().equalsIgnoreCase("all")) {
                for (SyncBackend b : SyncBackend.values()) {
                    if (b != SyncBackend.AUTO && (b == SyncBackend.SINGLE) == (n == 1)) {
                        chosen.add(b);
                    }
                }
            } else {
                chosen.add(SyncBackend.parse(part));
            }
        }
        return List.copyOf(chosen);
    }
}
