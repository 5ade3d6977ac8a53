package io.gradsync.cli;

import io.gradsync.bench.Sizes;
import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.device.Device;
import io.gradsync.bench.BackendDevices;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.train.DataParallelTrainer;
import io.gradsync.train.SyntheticData;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.cuda.CudaRuntime;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gradsync train}: data-parallel training of an MLP on synthetic data, timing the gradient sync. */
@Command(name = "train", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        // one string: picocli starts a new line at every array element, whatever the terminal width
        description = "Trains an MLP classifier on a seeded synthetic data set, data-parallel over N devices: forward, "
            + "backward and the optimizer are Java kernels in task graphs; gradients are averaged in buckets while "
            + "backward runs. Prints loss, throughput and the time spent in gradient sync per step, per backend.",
        footer = {"", "Examples:", "  gradsync train", "  gradsync train --backend all --devices 4 --steps 500 --dtype bf16",
            "  gradsync train --runtime cuda --layers 1024,4096,4096,4096,1000 --batch 1024"})
public final class TrainCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--backend", defaultValue = "auto", paramLabel = "LIST",
            description = "Backends to train with, one run each: auto, cpu, ptx, opencl, nccl, single, or all (default: ${DEFAULT-VALUE}).")
    String backends;

    @Option(names = "--devices", paramLabel = "N", description = "Replicas, one per device (default: every CUDA GPU, else 4 JVM devices).")
    Integer devices;

    @Option(names = "--runtime", defaultValue = "auto", paramLabel = "RUNTIME", description = "cuda, opencl, jvm or auto (default: ${DEFAULT-VALUE}).")
    String runtime;

    @Option(names = "--steps", defaultValue = "200", paramLabel = "N", description = "Optimizer steps (default: ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--batch", defaultValue = "256", paramLabel = "N", description = "Global batch, split evenly over the replicas: a multiple of --devices (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--dtype", defaultValue = "fp32", paramLabel = "TYPE", description = "Gradient dtype in the buckets: fp32, bf16, fp16 (default: ${DEFAULT-VALUE}); weights stay fp32.")
    String dtype;

    @Option(names = "--layers", defaultValue = "32,256,256,10", paramLabel = "LIST", description = "Features, hidden widths, classes (default: ${DEFAULT-VALUE}).")
    String layers;

    @Option(names = "--optimizer", defaultValue = "adam", paramLabel = "NAME", description = "sgd or adam (default: ${DEFAULT-VALUE}).")
    String optimizer;

    @Option(names = "--lr", paramLabel = "RATE", description = "Learning rate (default: 0.001 for adam, 0.05 for sgd).")
    Float learningRate;

    @Option(names = "--bucket", defaultValue = "25M", paramLabel = "SIZE", description = "Largest gradient bucket (default: ${DEFAULT-VALUE}).")
    String bucket;

    @Option(names = "--max-norm", defaultValue = "0", paramLabel = "NORM", description = "Clip gradients to this global norm, > 0; 0 for none (default).")
    double maxNorm;

    @Option(names = "--samples", defaultValue = "16384", paramLabel = "N", description = "Size of the synthetic data set (default: ${DEFAULT-VALUE}).")
    int samples;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N", description = "Seed of data and weights (default: ${DEFAULT-VALUE}).")
    long seed;

    /** Steps left out of the timings: the first ones compile kernels and allocate. */
    private static final int WARMUP_STEPS = 3;

    @Override
    public Integer call() {
        // Multi-process (torchrun, scripts/gradsync-multiproc): one GPU per process, rank 0 prints.
        RendezvousConfig launch = RendezvousConfig.isLaunched() ? RendezvousConfig.fromEnvironment() : null;
        PrintStream out = launch == null || launch.rank() == 0 ? System.out
                : new PrintStream(OutputStream.nullOutputStream());
        // Every input is checked before any device is touched, as a usage error (exit 2, the help named).
        if (steps < 1) {
            throw Usage.error(spec, "--steps must be at least 1, got " + steps);
        }
        if (batch < 1) {
            throw Usage.error(spec, "--batch must be at least 1, got " + batch);
        }
        if (samples < 1) {
            throw Usage.error(spec, "--samples must be at least 1, got " + samples);
        }
        // NaN passes every comparison: without the finite check it would train unclipped
        if (!Double.isFinite(maxNorm) || maxNorm < 0) {
            throw Usage.error(spec, "--max-norm must be a finite number >= 0 (0: no clipping), got " + maxNorm);
        }
        if (learningRate != null && !(Float.isFinite(learningRate) && learningRate > 0)) {
            throw Usage.error(spec, "--lr must be a finite number > 0, got " + learningRate);
        }
        DeviceRuntime rt = BenchCommand.requireRuntime(spec, runtime);
        int n = launch != null ? 1 : devices != null ? devices : rt == DeviceRuntime.JVM ? 4 : BenchCommand.defaultDeviceCount(spec, rt);
        if (n < 1) {
            throw Usage.error(spec, "--devices must be at least 1, got " + n);
        }
        List<SyncBackend> chosen = Usage.parse(spec, () -> BenchCommand.chooseBackends(backends, n));
        DataParallelTrainer.Optimizer opt = switch (optimizer.trim().toLowerCase(Locale.ROOT)) {
            case "sgd" -> DataParallelTrainer.Optimizer.SGD;
            case "adam" -> DataParallelTrainer.Optimizer.ADAM;
            default -> throw Usage.error(spec, "--optimizer: '" + optimizer + "' is neither sgd nor adam");
        };
        float lr = learningRate != null ? learningRate : opt == DataParallelTrainer.Optimizer.ADAM ? 1e-3f : 0.05f;
        List<Integer> widths = new ArrayList<>();
        for (String w : Usage.parse(spec, () -> Usage.items("--layers", layers))) {
            int width;
            try {
                width = Integer.parseInt(w);
            } catch (NumberFormatException e) {
                throw Usage.error(spec, "--layers: '" + w + "' is not a width in " + layers);
            }
            if (width < 1) {
                throw Usage.error(spec, "--layers: width " + width + " in " + layers + " is not at least 1");
            }
            widths.add(width);
        }
        if (widths.size() < 2 || widths.getLast() < 2) {
            throw Usage.error(spec, "--layers: need features, any hidden widths and at least 2 classes, got " + layers);
        }
        long bucketBytes = Usage.parse(spec, "--bucket", () -> Sizes.parse(bucket));
        if (bucketBytes < io.gradsync.sync.bucket.GradientBuckets.ALIGN_BYTES) {
            throw Usage.error(spec, "--bucket: " + bucket + " is smaller than a bucket's alignment ("
                    + io.gradsync.sync.bucket.GradientBuckets.ALIGN_BYTES + " bytes)");
        }
        DType gradType = Usage.parse(spec, "--dtype", () -> DType.parse(dtype));
        var config = Usage.parse(spec, () -> new DataParallelTrainer.Config(widths, batch, gradType, opt, lr, bucketBytes, maxNorm, seed));
        int world = launch != null ? launch.worldSize() : n;
        if (batch % world != 0) {
            throw Usage.error(spec, "--batch " + batch + " does not split evenly over " + world + " devices");
        }
        SyntheticData data = SyntheticData.generate(seed, samples, widths.getFirst(), widths.getLast());
        // each backend on its own runtime, as in bench: opencl on OpenCL devices (PoCL without GPUs),
        // ptx and nccl on CUDA GPUs, cpu and single on --runtime
        List<? extends Device> here = launch != null ? List.of(CudaRuntime.device(launch.localRank())) : null;
        boolean terminal = (launch == null || launch.rank() == 0) && System.console() != null && System.console().isTerminal();
        List<String> summary = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        int failures = 0;
        try (BackendDevices pool = launch != null ? null : new BackendDevices(rt, n)) {
            List<? extends Device> main = here != null ? here : pool.devicesFor(SyncBackend.CPU); // --runtime's devices
            out.printf(Locale.ROOT, "# gradsync train: %d x %s (%s), MLP %s, batch %d (%d per replica), %s gradients, %s lr %s, %d steps%n",
                    world, main.getFirst().runtime().label(), main.getFirst().name(), widths, batch, batch / world,
                    config.gradType().label(), opt.name().toLowerCase(Locale.ROOT), lr, steps);
            for (SyncBackend backend : chosen) {
                List<? extends Device> selected;
                try {
                    selected = here != null ? here : pool.devicesFor(backend);
                } catch (IllegalArgumentException | IllegalStateException | UnsupportedOperationException e) {
                    out.println("# " + backend.label() + ": skipped: " + e.getMessage());
                    skipped.add(backend.label() + " (" + e.getMessage() + ")");
                    continue;
                }
                if (selected != main) {
                    out.printf(Locale.ROOT, "# %s on %d x %s (%s)%n", backend.label(), selected.size(),
                            selected.getFirst().runtime().label(), selected.getFirst().name());
                }
                try (GradientSynchronizer sync = Synchronizers.create(backend, selected);
                        DataParallelTrainer trainer = new DataParallelTrainer(selected, sync, config)) {
                    summary.add(train(trainer, sync, data, terminal, out));
                } catch (UnsupportedOperationException | IllegalArgumentException e) {
                    out.println("# " + backend.label() + ": skipped: " + e.getMessage());
                    skipped.add(backend.label() + " (" + e.getMessage() + ")");
                } catch (RuntimeException e) {
                    failures++;
                    out.println("# " + backend.label() + ": FAILED: " + e);
                }
            }
            if (!summary.isEmpty()) {
                out.println();
                out.printf(Locale.ROOT, "%-8s %8s %8s %10s %10s %12s %12s %8s %8s%n", "backend", "devices", "buckets",
                        "loss", "step(ms)", "sync(ms)/step", "exposed(ms)", "sync%", "samples/s");
                summary.forEach(out::println);
            }
            if (summary.isEmpty() && failures == 0) { // on stderr too, as bench says it
                throw new IllegalStateException("no backend could run here: " + String.join("; ", skipped));
            }
            return failures == 0 && !summary.isEmpty() ? 0 : 1;
        }
    }

    private String train(DataParallelTrainer trainer, GradientSynchronizer sync, SyntheticData data, boolean terminal, PrintStream out) {
        String label = sync.backend().label();
        long stepNanos = 0;
        long syncNanos = 0;
        long exposedNanos = 0;
        int timed = 0;
        double loss = Double.NaN;
        double firstLoss = Double.NaN;
        int skipped = 0;
        ProgressBar bar = terminal ? new ProgressBarBuilder().setTaskName("train " + label).setInitialMax(steps)
                .setStyle(ProgressBarStyle.COLORFUL_UNICODE_BLOCK).setUpdateIntervalMillis(100).build() : null;
        try {
            for (int s = 0; s < steps; s++) {
                DataParallelTrainer.StepStats st = trainer.step(data);
                loss = st.loss();
                firstLoss = s == 0 ? loss : firstLoss;
                skipped += st.applied() ? 0 : 1;
                if (s >= Math.min(WARMUP_STEPS, steps - 1)) {
                    stepNanos += st.stepNanos();
                    syncNanos += st.syncNanos();
                    exposedNanos += st.exposedSyncNanos();
                    timed++;
                }
                double samplesPerSecond = timed == 0 ? 0 : timed * (double) batch / (stepNanos / 1e9);
                String message = String.format(Locale.ROOT, "loss %.4f  %.0f samples/s  sync %.2f ms/step", loss,
                        samplesPerSecond, timed == 0 ? 0 : syncNanos / 1e6 / timed);
                if (bar != null) {
                    bar.step();
                    bar.setExtraMessage(message);
                } else if (s == 0 || (s + 1) % Math.max(1, steps / 10) == 0 || s == steps - 1) {
                    out.printf(Locale.ROOT, "%-6s step %5d/%d  %s%n", label, s + 1, steps, message);
                }
            }
        } finally {
            if (bar != null) {
                bar.close();
            }
        }
        if (skipped > 0) {
            out.printf(Locale.ROOT, "# %s: %d step(s) skipped: non-finite gradients%n", label, skipped);
        }
        out.printf(Locale.ROOT, "# %s: loss %.4f -> %.4f%n", label, firstLoss, loss);
        double ms = stepNanos / 1e6 / timed;
        double syncMs = syncNanos / 1e6 / timed;
        double exposedMs = exposedNanos / 1e6 / timed;
        return String.format(Locale.ROOT, "%-8s %8d %8d %10.4f %10.3f %12.3f %12.3f %7.1f%% %9.0f", label,
                sync.worldSize(), trainer.buckets().buckets().size(), loss, ms, syncMs, exposedMs,
                100 * exposedMs / ms, batch / (ms / 1e3));
    }
}
