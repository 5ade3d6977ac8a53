package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What naming the caller's stream saves, per call: the host's time in the call, and the time
 * until the caller's stream may run its next work (its event after the call minus its event
 * before), for a call that waits for the whole device and returns once done ("device wait"),
 * against one ordered on the caller's streams that returns once queued ("caller stream").
 *
 * <p>Run on CUDA GPUs: {@code gradsync run -cp 'lib/*' io.gradsync.bench.CallerStreamBench [calls]}.
 * Replicas share the GPUs where there are fewer than two (logical devices); nccl runs as one rank.
 */
public final class CallerStreamBench {
    private static final long[] SIZES = {64 << 10, 256 << 10, 1 << 20};

    private CallerStreamBench() {
    }

    public static void main(String[] args) {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        List<? extends Device> gpus = DeviceCatalog.gpus(DeviceRuntime.CUDA);
        if (gpus.isEmpty()) {
            System.err.println("caller-stream bench: needs CUDA GPUs: " + DeviceCatalog.status(DeviceRuntime.CUDA).describe());
            System.exit(2);
        }
        List<? extends Device> two = gpus.size() >= 2 ? gpus.subList(0, 2) : DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, 2);
        System.out.printf(Locale.ROOT, "# caller streams: %d timed calls per row after warm-up; medians; replicas on %s%n", calls,
                two.stream().map(Device::id).toList());
        System.out.printf(Locale.ROOT, "%-6s %-9s %9s | %14s %14s | %14s %14s | %8s %8s%n", "backend", "replicas", "size",
                "host us (dev)", "stream us (dev)", "host us (str)", "stream us (str)", "host x", "stream x");
        run("ptx", two, calls);
        run("cpu", two, calls);
        run("nccl", List.of(gpus.getFirst()), calls);
    }

    private static void run(String backend, List<? extends Device> devices, int calls) {
        for (long size : SIZES) {
            try {
                double[] before = measure(backend, devices, size, calls, false);
                double[] after = measure(backend, devices, size, calls, true);
                System.out.printf(Locale.ROOT, "%-6s %-9d %9s | %14.1f %14.1f | %14.1f %14.1f | %8.2f %8.2f%n", backend,
                        devices.size(), Sizes.format(size), before[0], before[1], after[0], after[1],
                        before[0] / after[0], before[1] / after[1]);
            } catch (RuntimeException e) {
                System.out.printf(Locale.ROOT, "%-6s %-9d %9s | skipped: %s%n", backend, devices.size(), Sizes.format(size),
                        Messages.firstLine(e));
                return;
            }
        }
    }

    /** Median host microseconds per call and median caller-stream microseconds per call. */
    private static double[] measure(String backend, List<? extends Device> devices, long bytes, int calls, boolean streams) {
        List<DeviceStream> callerStreams = new ArrayList<>();
        List<DeviceBuffer> buffers = new ArrayList<>();
        List<Replica> replicas = new ArrayList<>();
        DeviceEvent before = devices.getFirst().createEvent();
        DeviceEvent after = devices.getFirst().createEvent();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices)) {
            for (Device d : devices) {
                DeviceStream s = d.createStream();
                DeviceBuffer b = d.allocate(bytes);
                s.fill32(b, 0, bytes, Float.floatToRawIntBits(1f));
                s.synchronize();
                callerStreams.add(s);
                buffers.add(b);
                Replica.Builder r = Replica.on(d).add("g", b, DType.FP32);
                replicas.add(streams ? r.stream(s).build() : r.build());
            }
            DeviceStream first = callerStreams.getFirst();
            int warm = Math.max(200, calls / 5);
            double[] host = new double[calls];
            double[] stream = new double[calls];
            for (int i = -warm; i < calls; i++) {
                first.record(before);
                long t0 = System.nanoTime();
                SyncHandle h = null;
                if (streams) {
                    h = sync.synchronizeAsync(replicas);
                } else {
                    sync.synchronize(replicas);
                }
                long t1 = System.nanoTime();
                first.record(after);
                after.synchronize();
                if (h != null) {
                    h.await();
                }
                if (i >= 0) {
                    host[i] = (t1 - t0) / 1e3;
                    stream[i] = after.elapsedMillisSince(before) * 1e3;
                }
            }
            return new double[] {Timing.of(host).medianMicros(), Timing.of(stream).medianMicros()};
        } finally {
            callerStreams.forEach(DeviceStream::close);
            buffers.forEach(DeviceBuffer::close);
            before.close();
            after.close();
        }
    }
}
