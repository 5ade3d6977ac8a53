package io.gradsync.sync.backend.opencl;

import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.OpenClOptions;
import io.gradsync.sync.backend.LocalSynchronizer;
import io.gradsync.sync.backend.SlicePlan;
import static io.gradsync.sync.backend.Resources.closeQuietly;

import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClBuffer;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClQueue;
import java.util.ArrayList;
import java.util.List;

/**
 * The project's fused average kernels as OpenCL C on every device; since OpenCL has no peer
 * pointers, slices move between devices through pinned (mapped) host memory and the devices do
 * the arithmetic. A reduce-scatter then an all-gather, through the host. Each run of gradients
 * ({@link SlicePlan}) is cut into N slices, slice i averaged by device i:
 * <ol>
 * <li><b>download</b>: device j copies every slice of its replica but its own into its host
 * buffer {@code host[j]} (packed layout);</li>
 * <li><b>reduce</b>: device i uploads slice i of the other replicas from {@code host[j]} into its
 * scratch, averages them with its own slice i in place ({@code average<N>}, summed in replica
 * order in fp32), and downloads the result into slice i of the shared {@code result} host buffer;</li>
 * <li><b>gather</b>: device j uploads every slice but its own from {@code result}.</li>
 * </ol>
 * Per device and byte of gradient that is 1 byte down and 2(N-1)/N bytes up, the least host
 * staging allows while the devices do the sums: each element must leave its device once, each
 * average must reach N-1 devices, and the reducing device must receive N-1 inputs.
 *
 * <p>To overlap the directions, each slice is cut into steps of {@link OpenClOptions#stepBytes()}
 * and every device has a download queue and an upload queue: downloads of step s+1 are queued
 * before the result download of step s, so copies out, copies in and kernels of neighbouring
 * steps run at once. One event per device, step and phase orders them: a reduce waits for the
 * step's downloads on every other device, a result download for its own kernel, a gather for the
 * step's results of every other device (which also proves that device j's download of the bytes
 * it is about to overwrite has finished). Every host region is written by one device per call
 * and read only after the event that follows the write; the call ends with every queue drained,
 * so the next call cannot overtake this one's reads. Every event is recorded in every call
 * before anything waits on it, so no wait sees a previous call's mark.
 *
 * <p>Queues are made once; host and scratch buffers grow when a larger layout arrives; kernels and
 * events are prepared once per layout. Works with N distinct devices of one platform, including
 * logical devices over one physical device
 * ({@link io.gradsync.tasks.opencl.OpenClRuntime#logicalDevices}), as in CI on PoCL.
 */
final class OpenClSynchronizer extends LocalSynchronizer<OpenClDevice> {
    /** One pipeline step: per slice i, elements {@code [first[i], first[i] + count[i])} of the run. */
    private record Step(SlicePlan.Run run, long[] first, long[] count) {
        long bytes(int i) {
            return count[i] * run.dtype().bytes();
        }

        /** Byte offset of slice i's part of this step in replica r's buffer. */
        long deviceOffset(int r, int i) {
            return run.offsets()[r] + first[i] * run.dtype().bytes();
        }

        long hostOffset(int i) {
            return run.packed() + first[i] * run.dtype().bytes();
        }
    }

    private final long chunkBytes;
    private final OpenClQueue[] down;
    private final OpenClQueue[] up;
    private final HostBuffer[] host;
    private final OpenClBuffer[] scratch;
    private HostBuffer result;
    private SlicePlan plan;
    private List<Step> steps = List.of();
    /** Per device, per step: the prepared reduce (null where the device's part is empty). */
    private OpenClKernels.PreparedLaunch[][] launches;
    /** Per device, per step: where the other replicas' parts sit in the scratch buffer. */
    private long[][] scratchAt;
    private DeviceEvent[][] downloaded;
    private DeviceEvent[][] computed;
    private DeviceEvent[][] reduced;
    /** Per device: a call's end on its download queue, and on both queues. */
    private final DeviceEvent[] downDone;
    /** Every queue, download ones first: where a call's work starts. */
    private final OpenClQueue[] queues;
    private final DeviceEvent[] done;

    OpenClSynchronizer(List<OpenClDevice> devices, OpenClOptions options, boolean waitForCaller) {
        super(devices, waitForCaller);
        this.chunkBytes = options.stepBytes();
        int n = devices.size();
        down = new OpenClQueue[n];
        up = new OpenClQueue[n];
        host = new HostBuffer[n];
        scratch = new OpenClBuffer[n];
        downDone = new DeviceEvent[n];
        done = new DeviceEvent[n];
        queues = new OpenClQueue[2 * n];
        if (n > 1) {
            try {
                for (int i = 0; i < n; i++) {
                    down[i] = devices.get(i).createStream();
                    up[i] = devices.get(i).createStream();
                    downDone[i] = devices.get(i).createEvent();
                    queues[i] = down[i];
                    queues[n + i] = up[i];
                    done[i] = devices.get(i).createEvent();
                }
            } catch (RuntimeException e) {
                release();
                throw e;
            }
        }
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.OPENCL;
    }

    @Override
    protected DeviceEvent[] average(List<Replica> replicas) {
        long t0 = System.nanoTime();
        if (plan == null || !plan.madeFor(replicas)) {
            replan(replicas);
        }
        if (steps.isEmpty()) {
            return null;
        }
        awaitCallerWork(queues); // one wait per device: both of its queues start behind the caller
        long t1 = System.nanoTime();
        stats.phase("prepare", t1 - t0);
        int n = devices.size();
        download(0);
        for (int s = 0; s < steps.size(); s++) {
            if (s + 1 < steps.size()) {
                download(s + 1); // ahead of this step's result downloads on the same queues
            }
            for (int i = 0; i < n; i++) {
                reduce(i, s);
            }
            for (int j = 0; j < n; j++) {
                gather(j, s);
            }
        }
        for (int i = 0; i < n; i++) { // a device is done once both of its queues are
            down[i].record(downDone[i]);
            up[i].waitFor(downDone[i]);
            up[i].record(done[i]);
        }
        stats.phase("enqueue", System.nanoTime() - t1);
        return done;
    }

    /** Device j copies its parts of step s, all but its own slice's, into {@code host[j]}. */
    private void download(int s) {
        Step step = steps.get(s);
        int n = devices.size();
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < n; k++) {
                if (k != j && step.count()[k] > 0) {
                    down[j].copyToHost(step.run().buffers()[j], step.deviceOffset(j, k), host[j], step.hostOffset(k),
                            step.bytes(k));
                }
            }
            down[j].record(downloaded[j][s]);
        }
    }

    /** Device i averages its slice's part of step s and puts the result in {@code result}. */
    private void reduce(int i, int s) {
        Step step = steps.get(s);
        int n = devices.size();
        OpenClQueue q = up[i];
        long bytes = step.bytes(i);
        if (bytes > 0) {
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    q.waitFor(downloaded[j][s]);
                }
            }
            long at = scratchAt[i][s];
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    q.copyFromHost(host[j], step.hostOffset(i), scratch[i], at, bytes);
                    at += SlicePlan.align(bytes);
                }
            }
            launches[i][s].launch(q);
        }
        q.record(computed[i][s]);
        down[i].waitFor(computed[i][s]);
        if (bytes > 0) {
            down[i].copyToHost(step.run().buffers()[i], step.deviceOffset(i, i), result, step.hostOffset(i), bytes);
        }
        down[i].record(reduced[i][s]);
    }

    /** Device j fetches the other slices' averages of step s. */
    private void gather(int j, int s) {
        Step step = steps.get(s);
        int n = devices.size();
        OpenClQueue q = up[j];
        for (int i = 0; i < n; i++) {
            if (i != j) {
                q.waitFor(reduced[i][s]);
            }
        }
        for (int k = 0; k < n; k++) {
            if (k != j && step.count()[k] > 0) {
                q.copyFromHost(result, step.hostOffset(k), step.run().buffers()[j], step.deviceOffset(j, k), step.bytes(k));
            }
        }
    }

    /** A new layout: cut steps, grow host and scratch memory if needed, prepare kernels and events. */
    private void replan(List<Replica> replicas) {
        closeLaunches();
        closeEvents();
        for (int i = 0; i < done.length; i++) {
            closeQuietly(downDone[i]);
            closeQuietly(done[i]);
        }
        plan = null;
        steps = List.of();
        SlicePlan p = SlicePlan.of(replicas);
        int n = devices.size();
        List<Step> cut = new ArrayList<>();
        for (SlicePlan.Run run : p.runs()) {
            long per = Math.max(SlicePlan.ALIGN_ELEMENTS, chunkBytes / run.dtype().bytes());
            long longest = 0;
            for (int i = 0; i < n; i++) {
                longest = Math.max(longest, run.sliceCount(i));
            }
            for (long done = 0; done < longest; done += per) {
                long[] first = new long[n];
                long[] count = new long[n];
                for (int i = 0; i < n; i++) {
                    first[i] = run.sliceStart(i) + Math.min(done, run.sliceCount(i));
                    count[i] = Math.max(0, Math.min(per, run.sliceCount(i) - done));
                }
                cut.add(new Step(run, first, count));
            }
        }
        long[][] at = new long[n][cut.size()];
        for (int i = 0; i < n; i++) {
            long used = 0;
            for (int s = 0; s < cut.size(); s++) {
                at[i][s] = used;
                used += (n - 1) * SlicePlan.align(cut.get(s).bytes(i));
            }
            used = Math.max(used, 256);
            if (host[i] == null || host[i].byteSize() < p.packedBytes()) {
                closeQuietly(host[i]);
                host[i] = null;
                host[i] = devices.get(i).allocateHost(p.packedBytes());
            }
            if (scratch[i] == null || scratch[i].byteSize() < used) {
                closeQuietly(scratch[i]);
                scratch[i] = null;
                scratch[i] = devices.get(i).allocate(used);
            }
        }
        if (result == null || result.byteSize() < p.packedBytes()) {
            closeQuietly(result);
            result = null;
            // one platform, one context: every device of it copies from this buffer
            result = devices.getFirst().allocateHost(p.packedBytes());
        }
        downloaded = events(cut.size());
        computed = events(cut.size());
        reduced = events(cut.size());
        OpenClKernels.PreparedLaunch[][] prepared = new OpenClKernels.PreparedLaunch[n][cut.size()];
        launches = prepared;
        float replicaCount = n; // the kernels divide their float64 sums by it
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < cut.size(); s++) {
                Step step = cut.get(s);
                int count = Math.toIntExact(step.count()[i]);
                if (count == 0) {
                    continue;
                }
                Object[] args = new Object[n + 2];
                DeviceSlice own = new DeviceSlice(step.run().buffers()[i], step.deviceOffset(i, i), count);
                args[0] = own;
                long slot = at[i][s];
                for (int j = 0; j < n; j++) {
                    if (j == i) {
                        args[1 + j] = own;
                    } else {
                        args[1 + j] = new DeviceSlice(scratch[i], slot, count);
                        slot += SlicePlan.align(step.bytes(i));
                    }
                }
                args[n + 1] = replicaCount;
                prepared[i][s] = OpenClKernels.prepare(up[i], SlicePlan.averageKernel(step.run().dtype(), n), count, args);
            }
        }
        scratchAt = at;
        steps = List.copyOf(cut);
        plan = p;
    }

    private DeviceEvent[][] events(int count) {
        DeviceEvent[][] e = new DeviceEvent[devices.size()][count];
        for (int i = 0; i < e.length; i++) {
            for (int s = 0; s < count; s++) {
                e[i][s] = devices.get(i).createEvent();
            }
        }
        return e;
    }

    @Override
    public void barrier() {
        checkOpen();
        for (OpenClDevice d : devices) {
            d.synchronize();
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

    private void closeEvents() {
        for (DeviceEvent[][] all : new DeviceEvent[][][] {downloaded, computed, reduced}) {
            if (all != null) {
                for (DeviceEvent[] row : all) {
                    for (DeviceEvent e : row) {
                        closeQuietly(e);
                    }
                }
            }
        }
        downloaded = null;
        computed = null;
        reduced = null;
    }

    @Override
    protected void release() {
        RuntimeException failure = null;
        for (OpenClQueue[] queues : new OpenClQueue[][] {up, down}) {
            for (OpenClQueue q : queues) {
                if (q != null) {
                    try {
                        q.synchronize();
                    } catch (RuntimeException e) {
                        failure = failure == null ? e : failure;
                    }
                    q.close();
                }
            }
        }
        closeLaunches();
        closeEvents();
        for (int i = 0; i < done.length; i++) {
            closeQuietly(downDone[i]);
            closeQuietly(done[i]);
        }
        for (int i = 0; i < host.length; i++) {
            closeQuietly(host[i]);
            closeQuietly(scratch[i]);
        }
        closeQuietly(result);
        if (failure != null) {
            throw failure;
        }
    }
}
