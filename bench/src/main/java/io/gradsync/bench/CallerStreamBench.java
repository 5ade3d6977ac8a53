package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.Synchronizers;
import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclComm;
import io.gradsync.nccl.NcclDataType;
import io.gradsync.nccl.NcclRedOp;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
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
 * against one ordered on the caller's streams that returns once queued ("caller stream"); beside
 * each size, the host's time to enqueue NCCL's own in-place all-reduce of as many bytes on as many
 * real GPUs as there are (up to the replicas), the floor an asynchronous call is held to.
 *
 * <p>"host us (queued)" times the caller-stream call as NCCL's enqueue is timed: calls back to back,
 * the streams drained every {@value #DRAIN} calls, as a training loop queues them; the other
 * columns wait for each call before the next. The lines under the table give each synchronizer's
 * own phases (means per call) in the queued run.
 *
 * <p>Run on CUDA GPUs: {@code gradsync run -cp 'lib/*' io.gradsync.bench.CallerStreamBench [calls [backends
 * [replicas]]]} (default 10,000 timed calls per row; ptx,cpu,nccl; 2,4; {@value #PTX_PER_GPU} is ptx with
 * every GPU launching its own slices' kernels at every size). Replicas share the GPUs
 * where there are fewer (logical devices); nccl runs one rank per real GPU.
 */
public final class CallerStreamBench {
    private static final long[] SIZES = {4 << 10, 64 << 10, 256 << 10, 1 << 20};
    private static final int[] REPLICAS = {2, 4};
    /** Calls queued between two drains of the streams, in the queued run and in NCCL's. */
    private static final int DRAIN = 64;
    /** The bench's name for ptx without {@link PtxOptions#oneGpuMaxBytes()}, to compare with it in one run. */
    private static final String PTX_PER_GPU = "ptx-per-gpu";

    private CallerStreamBench() {
    }

    public static void main(String[] args) {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        List<String> backends = args.length > 1 ? List.of(args[1].split(",")) : List.of("ptx", "cpu", "nccl");
        int[] replicaCounts = args.length > 2 ? java.util.Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray() : REPLICAS;
        List<? extends Device> gpus = DeviceCatalog.gpus(DeviceRuntime.CUDA);
        if (gpus.isEmpty()) {
            System.err.println("caller-stream bench: needs CUDA GPUs: " + DeviceCatalog.status(DeviceRuntime.CUDA).describe());
            System.exit(2);
        }
        System.out.printf(Locale.ROOT, "# caller streams: %d timed calls per row after warm-up; medians; %d GPUs%n", calls, gpus.size());
        System.out.printf(Locale.ROOT, "%-6s %-9s %9s | %14s %14s | %14s %14s | %8s %8s | %12s %9s | %16s %9s%n", "backend", "replicas", "size",
                "host us (dev)", "stream us (dev)", "host us (str)", "stream us (str)", "host x", "stream x", "nccl enq us", "str/enq",
                "host us (queued)", "q/enq");
        List<String> phases = new ArrayList<>();
        for (int n : replicaCounts) {
            List<? extends Device> devices = gpus.size() >= n ? gpus.subList(0, n) : DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n);
            List<? extends Device> ranks = gpus.subList(0, Math.min(n, gpus.size()));
            double[] enqueue = new double[SIZES.length];
            for (int s = 0; s < SIZES.length; s++) {
                enqueue[s] = ncclEnqueueMicros(ranks, SIZES[s], calls);
            }
            for (String backend : backends) {
                if (!backend.equals("nccl")) {
                    run(backend, devices, calls, enqueue, phases);
                } else if (ranks.size() == n || n == replicaCounts[0]) { // one row set where the GPUs are fewer than every count
                    run("nccl", ranks, calls, enqueue, phases);
                }
            }
        }
        phases.forEach(System.out::println);
    }

    private static void run(String backend, List<? extends Device> devices, int calls, double[] enqueue, List<String> phases) {
        for (int s = 0; s < SIZES.length; s++) {
            long size = SIZES[s];
            try {
                Measured before = measure(backend, devices, size, calls, false);
                Measured after = measure(backend, devices, size, calls, true);
                System.out.printf(Locale.ROOT, "%-6s %-9d %9s | %14.1f %14.1f | %14.1f %14.1f | %8.2f %8.2f | %12.1f %9.2f | %16.1f %9.2f%n",
                        backend, devices.size(), Sizes.format(size), before.host(), before.stream(), after.host(), after.stream(),
                        before.host() / after.host(), before.stream() / after.stream(), enqueue[s], after.host() / enqueue[s],
                        after.queued(), after.queued() / enqueue[s]);
                phases.add(String.format(Locale.ROOT, "# %s %d %s queued: %s", backend, devices.size(), Sizes.format(size), after.phases()));
            } catch (RuntimeException e) {
                System.out.printf(Locale.ROOT, "%-6s %-9d %9s | skipped: %s%n", backend, devices.size(), Sizes.format(size),
                        Messages.firstLine(e));
                return;
            }
        }
    }

    /**
     * Median host microseconds to enqueue NCCL's in-place fp32 average of {@code bytes} on one
     * communicator over {@code gpus} (one rank each, grouped), the streams drained every {@value #DRAIN} calls;
     * NaN where NCCL is missing.
     */
    static double ncclEnqueueMicros(List<? extends Device> gpus, long bytes, int calls) {
        if (!Nccl.isAvailable()) {
            return Double.NaN;
        }
        int[] ordinals = gpus.stream().mapToInt(d -> ((CudaDevice) d).ordinal()).toArray();
        List<NcclComm> comms = Nccl.initAll(ordinals);
        List<CudaStream> streams = new ArrayList<>();
        List<CudaBuffer> buffers = new ArrayList<>();
        try {
            for (Device d : gpus) {
                streams.add((CudaStream) d.createStream());
                buffers.add((CudaBuffer) d.allocate(bytes));
            }
            int warm = Math.max(200, calls / 5);
            double[] host = new double[calls];
            for (int i = -warm; i < calls; i++) {
                long t0 = System.nanoTime();
                Nccl.groupStart();
                for (int r = 0; r < comms.size(); r++) {
                    comms.get(r).allReduceInPlace(buffers.get(r).address(), bytes / 4, NcclDataType.FLOAT32, NcclRedOp.AVG,
                            streams.get(r).address());
                }
                Nccl.groupEnd();
                long t1 = System.nanoTime();
                if (i >= 0) {
                    host[i] = (t1 - t0) / 1e3;
                }
                if ((i & (DRAIN - 1)) == DRAIN - 1) {
                    streams.forEach(CudaStream::synchronize);
                }
            }
            streams.forEach(CudaStream::synchronize);
            return Timing.of(host).medianMicros();
        } finally {
            streams.forEach(CudaStream::close);
            buffers.forEach(CudaBuffer::close);
            Nccl.closeAll(comms);
        }
    }

    /**
     * Medians in microseconds of one row: the host's time per call and the caller stream's, each call
     * waited for; with the caller's streams also the host's time of calls queued back to back
     * ({@link #DRAIN}) and the synchronizer's phases in that run (NaN and null without).
     */
    private record Measured(double host, double stream, double queued, String phases) {
    }

    /** A backend by name, or {@value #PTX_PER_GPU}: ptx with every GPU averaging its own slices at every size. */
    private static GradientSynchronizer create(String backend, List<? extends Device> devices) {
        if (backend.equals(PTX_PER_GPU)) {
            return Synchronizers.create(SyncBackend.PTX, devices, SyncOptions.defaults().withPtx(PtxOptions.defaults().withOneGpuMaxBytes(0)));
        }
        return Synchronizers.create(SyncBackend.parse(backend), devices);
    }

    private static Measured measure(String backend, List<? extends Device> devices, long bytes, int calls, boolean streams) {
        List<DeviceStream> callerStreams = new ArrayList<>();
        List<DeviceBuffer> buffers = new ArrayList<>();
        List<Replica> replicas = new ArrayList<>();
        DeviceEvent before = devices.getFirst().createEvent();
        DeviceEvent after = devices.getFirst().createEvent();
        try (GradientSynchronizer sync = create(backend, devices)) {
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
            if (!streams) {
                return new Measured(Timing.of(host).medianMicros(), Timing.of(stream).medianMicros(), Double.NaN, null);
            }
            double[] queued = new double[calls];
            List<SyncHandle> open = new ArrayList<>();
            for (int i = -warm; i < calls; i++) {
                if (i == 0) {
                    sync.stats().reset();
                }
                long t0 = System.nanoTime();
                open.add(sync.synchronizeAsync(replicas));
                long t1 = System.nanoTime();
                if (i >= 0) {
                    queued[i] = (t1 - t0) / 1e3;
                }
                if ((i & (DRAIN - 1)) == DRAIN - 1 || i == calls - 1) {
                    open.forEach(SyncHandle::await);
                    open.clear();
                    callerStreams.forEach(DeviceStream::synchronize);
                }
            }
            return new Measured(Timing.of(host).medianMicros(), Timing.of(stream).medianMicros(), Timing.of(queued).medianMicros(),
                    sync.stats().describe());
        } finally {
            callerStreams.forEach(DeviceStream::close);
            buffers.forEach(DeviceBuffer::close);
            before.close();
            after.close();
        }
    }
}
