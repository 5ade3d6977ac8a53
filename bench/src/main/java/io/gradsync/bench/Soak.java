package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.sync.backend.Backends;
import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.sync.verify.RandomGradients;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Many calls with random sizes, dtypes, replica counts and backends, every result checked against
 * the float64 average, while the resources a leak would grow are watched: free GPU memory
 * ({@code cuMemGetInfo}), the process's resident memory (pinned host memory counts there), live
 * threads and open file descriptors. Synchronizers are kept per backend and replica count and made
 * anew every {@code RENEW} calls, so creation and release are soaked too.
 *
 * <p>{@code gradsync run -cp 'lib/*' io.gradsync.bench.Soak [calls] [seed]}; replicas share the GPUs where
 * there are fewer than they; a backend that takes no shared GPUs (nccl) runs as one rank per GPU (its
 * own replica count is the GPUs'). The backends are the registered providers ({@code Backends.all()}).
 * Exit status 1 when any element is wrong or a call fails.
 */
public final class Soak {
    private static final int RENEW = 500;
    private static final int REPORT = 1000;

    private Soak() {
    }

    public static void main(String[] args) throws IOException {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        long seed = args.length > 1 ? Long.parseLong(args[1]) : 1;
        List<? extends Device> gpus = DeviceCatalog.gpus(DeviceRuntime.CUDA);
        boolean cuda = !gpus.isEmpty();
        // every registered backend that averages: single has nothing to check
        List<BackendProvider> backends = new ArrayList<>(Backends.all().stream()
                .filter(p -> p.backend() != SyncBackend.SINGLE).toList());
        SplittableRandom random = new SplittableRandom(seed);
        Map<String, GradientSynchronizer> syncs = new HashMap<>();
        Map<String, List<? extends Device>> deviceSets = new HashMap<>();
        long wrong = 0;
        long failed = 0;
        Map<String, Integer> perBackend = new HashMap<>();
        System.out.printf(Locale.ROOT, "# soak: %d calls, seed %d, %s%n", calls, seed, cuda ? gpus.size() + " GPU(s)" : "JVM devices");
        System.out.printf(Locale.ROOT, "%8s %8s %8s %14s %12s %8s %6s%n", "calls", "wrong", "failed", "gpu free MiB", "rss MiB",
                "threads", "fds");
        report(0, wrong, failed, gpus);
        for (int call = 1; call <= calls; call++) {
            BackendProvider backend = backends.get(random.nextInt(backends.size()));
            int n = backend.sharesGpus() ? 2 + random.nextInt(3) : Math.max(1, gpus.size());
            String key = backend.backend().label() + "/" + n;
            try {
                List<? extends Device> devices = deviceSets.computeIfAbsent(key, k -> devicesFor(backend, n, gpus));
                GradientSynchronizer sync = syncs.get(key);
                if (sync == null || call % RENEW == 0) {
                    if (sync != null) {
                        sync.close();
                    }
                    sync = Synchronizers.create(backend.backend(), devices);
                    syncs.put(key, sync);
                }
                DType dtype = DType.values()[random.nextInt(DType.values().length)];
                long count = 1 + (long) Math.pow(2, random.nextDouble() * 21); // 1 .. 2M elements, log-spread
                wrong += oneCall(sync, devices, dtype, count, random.nextLong());
                perBackend.merge(backend.backend().label(), 1, Integer::sum);
            } catch (UnsupportedOperationException e) {
                backends.remove(backend); // not here (opencl without OpenCL, nccl without NCCL): say so once
                System.out.println("# " + backend.backend().label() + " skipped: " + Messages.firstLine(e));
                call--;
                if (backends.isEmpty()) {
                    break;
                }
            } catch (RuntimeException e) {
                failed++;
                System.out.println("# call " + call + " (" + key + ") failed: " + Messages.firstLine(e));
            }
            if (call > 0 && call % REPORT == 0) {
                report(call, wrong, failed, gpus);
            }
        }
        syncs.values().forEach(GradientSynchronizer::close);
        deviceSets.values().forEach(ds -> ds.forEach(d -> {
            if (!cuda) {
                d.close();
            }
        }));
        report(calls, wrong, failed, gpus);
        System.out.println("# calls per backend: " + perBackend);
        System.exit(wrong == 0 && failed == 0 ? 0 : 1);
    }

    /** Its runtime's devices: OpenCL's logical devices, else the GPUs (shared where it takes that), else JVM devices. */
    private static List<? extends Device> devicesFor(BackendProvider backend, int n, List<? extends Device> gpus) {
        if (backend.runtime() == DeviceRuntime.OPENCL) {
            return io.gradsync.tasks.opencl.OpenClRuntime.logicalDevices(n);
        }
        if (gpus.isEmpty()) {
            return io.gradsync.tasks.jvm.JvmRuntime.createDevices(n);
        }
        if (!backend.sharesGpus()) {
            return gpus;
        }
        return gpus.size() >= n ? gpus.subList(0, n) : DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n);
    }

    /** One call on fresh buffers of random values; returns the elements that differ from the float64 average. */
    private static long oneCall(GradientSynchronizer sync, List<? extends Device> devices, DType dtype, long count, long seed) {
        long bytes = count * dtype.bytes();
        List<DeviceBuffer> buffers = new ArrayList<>();
        List<HostBuffer> hosts = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(seed);
        try {
            List<Replica> replicas = new ArrayList<>();
            MemorySegment[] inputs = new MemorySegment[devices.size()];
            for (int r = 0; r < devices.size(); r++) {
                Device d = devices.get(r);
                DeviceBuffer b = d.allocate(bytes);
                HostBuffer h = d.allocateHost(bytes);
                buffers.add(b);
                hosts.add(h);
                RandomGradients.fill(dtype, h.segment(), count, random);
                inputs[r] = MemorySegment.ofArray(new byte[(int) bytes]).copyFrom(h.segment());
                try (DeviceStream s = d.createStream()) {
                    s.copyFromHost(h, 0, b, 0, bytes);
                    s.synchronize();
                }
                replicas.add(Replica.on(d).add(new Gradient("g", b, 0, count, dtype)).build());
            }
            sync.synchronize(replicas);
            long wrong = 0;
            for (int r = 0; r < devices.size(); r++) {
                try (DeviceStream s = devices.get(r).createStream()) {
                    s.copyToHost(buffers.get(r), 0, hosts.get(r), 0, bytes);
                    s.synchronize();
                }
                wrong += AverageCheck.countWrong(dtype, inputs, hosts.get(r).segment(), count);
            }
            return wrong;
        } finally {
            buffers.forEach(DeviceBuffer::close);
            hosts.forEach(HostBuffer::close);
        }
    }

    private static void report(int calls, long wrong, long failed, List<? extends Device> gpus) throws IOException {
        long free = gpus.isEmpty() ? -1 : ((CudaDevice) gpus.getFirst()).freeMemoryBytes() >> 20;
        long fds;
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            fds = s.count();
        }
        System.out.printf(Locale.ROOT, "%8d %8d %8d %14d %12d %8d %6d%n", calls, wrong, failed, free, residentMib(),
                java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount(), fds);
    }

    private static long residentMib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) >> 10;
            }
        }
        return -1;
    }
}
