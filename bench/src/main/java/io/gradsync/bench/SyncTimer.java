package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Median time of {@code synchronize} per backend, size and dtype on N replicas: on GPUs, sharing
 * them where there are fewer than N (which {@code bench} does not do), else on JVM devices. For
 * comparing two builds in one run: put the other build's jars first on the class path.
 *
 * <p>{@code gradsync run -cp 'lib/*' io.gradsync.bench.SyncTimer BACKENDS SIZES DTYPES N [ITERS]},
 * e.g. {@code ptx,cpu 16M,256M fp32,bf16 2}.
 */
public final class SyncTimer {
    private SyncTimer() {
    }

    public static void main(String[] args) {
        List<String> backends = List.of(args[0].split(","));
        List<Long> sizes = Sizes.parseList(args[1]);
        List<String> dtypes = List.of(args[2].split(","));
        int n = Integer.parseInt(args[3]);
        int iters = args.length > 4 ? Integer.parseInt(args[4]) : 20;
        List<? extends Device> gpus = DeviceCatalog.gpus(DeviceRuntime.CUDA);
        List<? extends Device> devices = gpus.isEmpty() ? JvmRuntime.createDevices(n)
                : gpus.size() >= n ? gpus.subList(0, n) : DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n);
        System.out.printf(Locale.ROOT, "# sync timer: %s, %d timed calls, medians%n", devices.stream().map(Device::id).toList(), iters);
        System.out.printf(Locale.ROOT, "%-6s %-5s %8s %12s %10s%n", "backend", "type", "size", "time us", "busbw GB/s");
        for (String backend : backends) {
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices)) {
                for (String t : dtypes) {
                    DType dtype = DType.parse(t);
                    for (long size : sizes) {
                        double us = time(sync, devices, dtype, size, iters);
                        double busbw = size / (us * 1e-6) * 2 * (n - 1) / n / 1e9;
                        System.out.printf(Locale.ROOT, "%-6s %-5s %8s %12.1f %10.1f%n", backend, dtype.label(), Sizes.format(size), us, busbw);
                    }
                }
            } catch (UnsupportedOperationException e) {
                System.out.println(backend + ": skipped: " + Messages.firstLine(e));
            }
        }
    }

    private static double time(GradientSynchronizer sync, List<? extends Device> devices, DType dtype, long bytes, int iters) {
        List<DeviceBuffer> buffers = new ArrayList<>();
        List<Replica> replicas = new ArrayList<>();
        try {
            for (Device d : devices) {
                DeviceBuffer b = d.allocate(bytes);
                try (DeviceStream s = d.createStream()) {
                    s.fill32(b, 0, bytes, dtype == DType.FP32 ? Float.floatToRawIntBits(0.5f) : 0x3F003F00);
                    s.synchronize();
                }
                buffers.add(b);
                replicas.add(Replica.on(d).add("g", b, dtype).build());
            }
            long until = System.nanoTime() + 300_000_000L;
            for (int w = 0; w < 3 || System.nanoTime() < until; w++) {
                sync.synchronize(replicas);
            }
            double[] us = new double[iters];
            for (int i = 0; i < iters; i++) {
                long t0 = System.nanoTime();
                sync.synchronize(replicas);
                us[i] = (System.nanoTime() - t0) / 1e3;
            }
            return Timing.of(us).medianMicros();
        } finally {
            buffers.forEach(DeviceBuffer::close);
        }
    }
}
