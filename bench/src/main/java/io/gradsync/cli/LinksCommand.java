package io.gradsync.cli;

import io.gradsync.bench.LinkProbe;
import io.gradsync.bench.Sizes;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Bandwidth of the links under the sync backends: host to device, device to host, peer, device copy. */
@Command(name = "links", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        description = "Measure the links sync moves data over: pinned host <-> each device, all devices at once, "
                + "GPU to GPU (CUDA) and device copy. These bound what each backend can reach.",
        footer = {"", "Examples:", "  gradsync links", "  gradsync links --devices 2 --size 1G"})
final class LinksCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--devices", paramLabel = "N", description = "Devices (default: every CUDA GPU, else 2 JVM devices).")
    Integer devices;

    @Option(names = "--runtime", defaultValue = "auto", paramLabel = "RUNTIME", description = "cuda, opencl, jvm or auto.")
    String runtime;

    @Option(names = "--size", defaultValue = "256M", paramLabel = "SIZE", description = "Bytes per copy (default: ${DEFAULT-VALUE}).")
    String size;

    @Option(names = "--repeats", defaultValue = "10", paramLabel = "N", description = "Timed copies per link (default: ${DEFAULT-VALUE}).")
    int repeats;

    @Override
    public Integer call() {
        if (repeats < 1) { // the median of no copies is no figure
            throw Usage.error(spec, "--repeats must be at least 1, got " + repeats);
        }
        DeviceRuntime rt = BenchCommand.requireRuntime(spec, runtime);
        int n = devices != null ? devices : rt == DeviceRuntime.JVM ? 2 : BenchCommand.defaultDeviceCount(spec, rt);
        if (n < 1) {
            throw Usage.error(spec, "--devices must be at least 1, got " + n);
        }
        long bytes = Usage.parse(spec, "--size", () -> Sizes.parse(size));
        // per device: two device buffers and a pinned one; JVM devices' memory is host memory
        Preflight.fits(spec, "--size " + size + " on " + n + " devices",
                Preflight.times(Preflight.times(bytes, n), rt == DeviceRuntime.JVM ? 3 : 1), Preflight.times(bytes, 2),
                rt == DeviceRuntime.CUDA ? DeviceCatalog.gpus(rt) : List.of());
        List<? extends Device> selected = Usage.parse(spec, "--devices " + n, () -> DeviceCatalog.select(rt, n));
        try {
            System.out.printf(Locale.ROOT, "# links: %d x %s (%s), %s per copy, median of %d%n", n, rt.label(),
                    selected.getFirst().name(), Sizes.format(bytes), repeats);
            for (LinkProbe.Link link : LinkProbe.measure(selected, bytes, repeats)) {
                System.out.printf(Locale.ROOT, "  %-32s %9.1f GB/s%n", link.name(), link.gbPerSecond());
            }
            return 0;
        } finally {
            if (rt == DeviceRuntime.JVM) {
                selected.forEach(Device::close);
            }
        }
    }
}
