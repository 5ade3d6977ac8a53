package io.gradsync.sync;

import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClBuffer;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClQueue;
import java.util.ArrayList;
import java.util.List;

/**
 * The project's fused average kernels as OpenCL C on every device; since OpenCL has no peer
 * pointers, slices move between devices through pinned (mapped) host memory and the devices do
 * the arithmetic. A reduce-scatter then an all-gather, through the host:
 * <ol>
 * <li><b>download</b>: device j copies every slice of its replica but its own (slice j) into its
 * host buffer {@code host[j]} (packed layout);</li>
 * <li><b>reduce</b>: device i, once every download is done, uploads slice i of the other replicas
 * from {@code host[j]} into its scratch buffer, averages them with its own slice i in place
 * ({@code average<N>}, summed in replica order in fp32), and downloads the result into slice i of
 * the shared {@code result} host buffer;</li>
 * <li><b>gather</b>: device j, once every reduce is done, uploads every slice but its own from
 * {@code result}.</li>
 * </ol>
 * Per device and byte of gradient that is 1 byte down and 2(N-1)/N bytes up, the least host
 * staging allows while the devices do the sums (each element must leave its device once, each
 * average must reach N-1 devices, and the reducing device must receive N-1 inputs). Every slice
 * region of the host buffers is written by exactly one device per call and read only after the
 * event that follows the write, so no two devices touch the same bytes at once; the call ends
 * with every queue drained, so the next call's downloads cannot overtake this call's reads.
 *
 * <p>Queues, events and host memory are made once; host and scratch buffers grow when a larger
 * layout arrives; kernels are prepared once per layout. Works with N distinct devices of one
 * platform, including logical devices over one physical device
 * ({@link io.gradsync.tasks.opencl.OpenClRuntime#logicalDevices}), as in CI on PoCL.
 */
final class OpenClSynchronizer implements GradientSynchronizer {
    private final List<OpenClDevice> devices;
    private final OpenClQueue[] queues;
    private final DeviceEvent[] downloaded;
    private final DeviceEvent[] reduced;
    private final HostBuffer[] host;
    private final OpenClBuffer[] scratch;
    private HostBuffer result;
    private final SyncStats stats = new SyncStats();
    private SlicePlan plan;
    /** Per device, per run: the prepared reduce (null where the device's slice is empty). */
    private OpenClKernels.PreparedLaunch[][] launches;
    /** Per device, per run: where the other replicas' slices sit in the scratch buffer. */
    private long[][] scratchAt;
    private volatile boolean closed;

    OpenClSynchronizer(List<OpenClDevice> devices) {
        this.devices = List.copyOf(devices);
        int n = devices.size();
        queues = new OpenClQueue[n];
        downloaded = new DeviceEvent[n];
        reduced = new DeviceEvent[n];
        host = new HostBuffer[n];
        scratch = new OpenClBuffer[n];
        if (n > 1) {
            try {
                for (int i = 0; i < n; i++) {
                    queues[i] = devices.get(i).createStream();
                    downloaded[i] = devices.get(i).createEvent();
                    reduced[i] = devices.get(i).createEvent();
                }
            } catch (RuntimeException e) {
                releaseAll();
                throw e;
            }
        }
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.OPENCL;
    }

    @Override
    public int localRank() {
        return 0;
    }

    @Override
    public int rank() {
        return 0;
    }

    @Override
    public int worldSize() {
        return devices.size();
    }

    @Override
    public synchronized void synchronize(List<Replica> replicas) {
        checkOpen();
        long t0 = System.nanoTime();
        ReplicaCheck.check(replicas, devices);
        long bytes = 0;
        for (Gradient g : replicas.getFirst().gradients()) {
            bytes += g.byteSize();
        }
        if (devices.size() > 1) {
            run(replicas);
        }
        stats.call(bytes, System.nanoTime() - t0);
    }

    private void run(List<Replica> replicas) {
        long t0 = System.nanoTime();
        if (plan == null || !plan.madeFor(replicas)) {
            replan(replicas);
        }
        if (plan.runs().isEmpty()) {
            return;
        }
        for (OpenClDevice d : devices) {
            d.synchronize(); // the caller's work on the gradients comes first
        }
        long t1 = System.nanoTime();
        stats.phase("prepare", t1 - t0);
        int n = devices.size();
        List<SlicePlan.Run> runs = plan.runs();
        for (int j = 0; j < n; j++) {
            for (SlicePlan.Run run : runs) {
                int size = run.dtype().bytes();
                long lo = run.sliceStart(j);
                long hi = lo + run.sliceCount(j);
                // everything before and after the own slice, in at most two copies
                if (lo > 0) {
                    queues[j].copyToHost(run.buffers()[j], run.offsets()[j], host[j], run.packed(), lo * size);
                }
                if (hi < run.count()) {
                    queues[j].copyToHost(run.buffers()[j], run.offsets()[j] + hi * size, host[j],
                            run.packed() + hi * size, (run.count() - hi) * size);
                }
            }
            queues[j].record(downloaded[j]);
        }
        for (int i = 0; i < n; i++) {
            OpenClQueue q = queues[i];
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    q.waitFor(downloaded[j]);
                }
            }
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                long sliceBytes = run.sliceCount(i) * run.dtype().bytes();
                if (sliceBytes == 0) {
                    continue;
                }
                long at = scratchAt[i][k];
                for (int j = 0; j < n; j++) {
                    if (j != i) {
                        q.copyFromHost(host[j], run.packedSliceOffset(i), scratch[i], at, sliceBytes);
                        at += SlicePlan.align(sliceBytes);
                    }
                }
                launches[i][k].launch(q);
                q.copyToHost(run.buffers()[i], run.sliceOffset(i, i), result, run.packedSliceOffset(i), sliceBytes);
            }
            q.record(reduced[i]);
        }
        for (int j = 0; j < n; j++) {
            OpenClQueue q = queues[j];
            for (int i = 0; i < n; i++) {
                if (i != j) {
                    q.waitFor(reduced[i]);
                }
            }
            for (SlicePlan.Run run : runs) {
                int size = run.dtype().bytes();
                long lo = run.sliceStart(j);
                long hi = lo + run.sliceCount(j);
                if (lo > 0) {
                    q.copyFromHost(result, run.packed(), run.buffers()[j], run.offsets()[j], lo * size);
                }
                if (hi < run.count()) {
                    q.copyFromHost(result, run.packed() + hi * size, run.buffers()[j], run.offsets()[j] + hi * size,
                            (run.count() - hi) * size);
                }
            }
        }
        long t2 = System.nanoTime();
        stats.phase("enqueue", t2 - t1);
        for (OpenClQueue q : queues) {
            q.synchronize();
        }
        stats.phase("wait", System.nanoTime() - t2);
    }

    /** A new layout: grow host and scratch memory if needed, prepare every device's kernels. */
    private void replan(List<Replica> replicas) {
        closeLaunches();
        plan = null;
        SlicePlan p = SlicePlan.of(replicas);
        int n = devices.size();
        List<SlicePlan.Run> runs = p.runs();
        long[][] at = new long[n][runs.size()];
        long[] need = new long[n];
        for (int i = 0; i < n; i++) {
            long used = 0;
            for (int k = 0; k < runs.size(); k++) {
                at[i][k] = used;
                used += (n - 1) * SlicePlan.align(runs.get(k).sliceCount(i) * runs.get(k).dtype().bytes());
            }
            need[i] = Math.max(used, 256);
        }
        for (int i = 0; i < n; i++) {
            if (host[i] == null || host[i].byteSize() < p.packedBytes()) {
                closeQuietly(host[i]);
                host[i] = null;
                host[i] = devices.get(i).allocateHost(p.packedBytes());
            }
            if (scratch[i] == null || scratch[i].byteSize() < need[i]) {
                closeQuietly(scratch[i]);
                scratch[i] = null;
                scratch[i] = devices.get(i).allocate(need[i]);
            }
        }
        if (result == null || result.byteSize() < p.packedBytes()) {
            closeQuietly(result);
            result = null;
            // one platform, one context: every device of it copies from this buffer
            result = devices.getFirst().allocateHost(p.packedBytes());
        }
        OpenClKernels.PreparedLaunch[][] prepared = new OpenClKernels.PreparedLaunch[n][runs.size()];
        launches = prepared;
        float invK = 1.0f / n;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                int count = Math.toIntExact(run.sliceCount(i));
                if (count == 0) {
                    continue;
                }
                Object[] args = new Object[n + 2];
                DeviceSlice own = new DeviceSlice(run.buffers()[i], run.sliceOffset(i, i), count);
                args[0] = own;
                long slot = at[i][k];
                for (int j = 0; j < n; j++) {
                    if (j == i) {
                        args[1 + j] = own;
                    } else {
                        args[1 + j] = new DeviceSlice(scratch[i], slot, count);
                        slot += SlicePlan.align((long) count * run.dtype().bytes());
                    }
                }
                args[n + 1] = invK;
                prepared[i][k] = OpenClKernels.prepare(queues[i], SlicePlan.averageKernel(run.dtype(), n), count, args);
            }
        }
        scratchAt = at;
        plan = p;
    }

    @Override
    public SyncStats stats() {
        return stats;
    }

    @Override
    public void barrier() {
        checkOpen();
        for (OpenClDevice d : devices) {
            d.synchronize();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("opencl synchronizer is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            releaseAll();
        }
    }

    private void closeLaunches() {
        if (launches != null) {
            for (OpenClKernels.PreparedLaunch[] row : launches) {
                for (OpenClKernels.PreparedLaunch l : row) {
                    if (l != null) {
                        l.close();
                    }
                }
            }
            launches = null;
        }
    }

    private void releaseAll() {
        List<RuntimeException> failures = new ArrayList<>();
        for (OpenClQueue q : queues) {
            if (q != null) {
                try {
                    q.synchronize();
                } catch (RuntimeException e) {
                    failures.add(e);
                }
                q.close();
            }
        }
        closeLaunches();
        for (DeviceEvent[] events : new DeviceEvent[][] {downloaded, reduced}) {
            for (DeviceEvent e : events) {
                closeQuietly(e);
            }
        }
        for (int i = 0; i < host.length; i++) {
            closeQuietly(host[i]);
            closeQuietly(scratch[i]);
        }
        closeQuietly(result);
        if (!failures.isEmpty()) {
            throw failures.getFirst();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // releasing on the way out; the first failure is already being reported
            }
        }
    }
}
