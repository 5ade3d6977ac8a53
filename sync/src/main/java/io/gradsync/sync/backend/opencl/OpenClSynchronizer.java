package io.gradsync.sync.backend.opencl;

import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.OpenClOptions;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.LocalSynchronizer;
import io.gradsync.sync.backend.SlicePlan;
import static io.gradsync.sync.backend.Resources.closeQuietly;

import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClQueue;
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
 * so the next call cannot overtake this one's reads. Every event a call waits on is recorded in
 * that call before anything waits on it, so no wait sees a previous call's mark.
 *
 * <p>The other collectives keep the phases they need: a reduce-scatter (slices cut by shard,
 * {@link SlicePlan#sharded}) stops after the reduce, its result left in each device's own slice;
 * an all-gather has each device put its own slice into {@code result}, then gathers; a broadcast
 * has the root put every slice into {@code result}, and the others gather all of them.
 *
 * <p>Queues are made once; host and scratch buffers grow when a larger layout arrives
 * ({@link OpenClMemory}); kernels and events are prepared once per layout ({@link OpenClPlan},
 * {@link OpenClPrepared}). Works with N distinct devices of one platform, including
 * logical devices over one physical device
 * ({@link io.gradsync.tasks.opencl.OpenClRuntime#logicalDevices}), as in CI on PoCL.
 */
final class OpenClSynchronizer extends LocalSynchronizer<OpenClDevice> {
    private final long chunkBytes;
    private final OpenClQueue[] down;
    private final OpenClQueue[] up;
    private final OpenClMemory memory;
    /** The current layout's steps, and its prepared kernels and events (null until a layout came, or after a failed one). */
    private OpenClPlan plan;
    private List<OpenClPlan.Step> steps = List.of();
    private OpenClPrepared prepared;
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
        memory = new OpenClMemory(devices);
        downDone = new DeviceEvent[n];
        done = new DeviceEvent[n];
        queues = new OpenClQueue[2 * n];
        if (n > 1) {
            try {
                for (int i = 0; i < n; i++) {
                    down[i] = devices.get(i).createStream();
                    up[i] = devices.get(i).createStream();
                    downDone[i] = devices.get(i).createUntimedEvent();
                    queues[i] = down[i];
                    queues[n + i] = up[i];
                    done[i] = devices.get(i).createUntimedEvent();
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
    protected DeviceEvent[] perform(List<Replica> replicas, Collective op) {
        long t0 = System.nanoTime();
        if (plan == null || !plan.slices.madeFor(replicas, op)) {
            replan(replicas, op);
        }
        if (steps.isEmpty()) {
            return null;
        }
        awaitCallerWork(queues); // one wait per device: both of its queues start behind the caller
        long t1 = System.nanoTime();
        stats.phase("prepare", t1 - t0);
        int n = devices.size();
        if (op.sums()) {
            download(0);
        }
        for (int s = 0; s < steps.size(); s++) {
            if (op.sums() && s + 1 < steps.size()) {
                download(s + 1); // ahead of this step's result downloads on the same queues
            }
            for (int i = 0; i < n; i++) {
                switch (op.kind()) {
                    case ALL_REDUCE -> reduce(i, s, true);
                    case REDUCE_SCATTER -> reduce(i, s, false);
                    case ALL_GATHER -> publish(i, s, i);
                    case BROADCAST -> {
                        if (i == op.root()) {
                            for (int k = 0; k < n; k++) {
                                publish(i, s, k);
                            }
                        }
                    }
                }
            }
            for (int j = 0; j < n; j++) {
                if (op.kind() != Collective.Kind.REDUCE_SCATTER && j != op.root()) {
                    gather(j, s, op.root());
                }
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
        OpenClPlan.Step step = steps.get(s);
        int n = devices.size();
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < n; k++) {
                if (k != j && step.count()[k] > 0) {
                    down[j].copyToHost(step.run().buffers()[j], step.deviceOffset(j, k), memory.host[j], step.hostOffset(k),
                            step.bytes(k));
                }
            }
            down[j].record(prepared.downloaded[j][s]);
        }
    }

    /** Device i averages its slice's part of step s, and where others need it ({@code publish}) puts it in {@code result}. */
    private void reduce(int i, int s, boolean publish) {
        OpenClPlan.Step step = steps.get(s);
        int n = devices.size();
        OpenClQueue q = up[i];
        long bytes = step.bytes(i);
        if (bytes > 0) {
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    q.waitFor(prepared.downloaded[j][s]);
                }
            }
            long at = plan.scratchAt[i][s];
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    q.copyFromHost(memory.host[j], step.hostOffset(i), memory.scratch[i], at, bytes);
                    at += SlicePlan.align(bytes);
                }
            }
            prepared.launches[i][s].launch(q);
        }
        if (!publish) {
            return;
        }
        q.record(prepared.computed[i][s]);
        down[i].waitFor(prepared.computed[i][s]);
        if (bytes > 0) {
            down[i].copyToHost(step.run().buffers()[i], step.deviceOffset(i, i), memory.result, step.hostOffset(i), bytes);
        }
        down[i].record(prepared.reduced[i][s]);
    }

    /**
     * Device i puts slice k's part of step s of its replica, as it is, into {@code result}
     * (all-gather: its own slice; broadcast: the root's every slice), then marks its step reduced.
     */
    private void publish(int i, int s, int k) {
        OpenClPlan.Step step = steps.get(s);
        if (step.bytes(k) > 0) {
            down[i].copyToHost(step.run().buffers()[i], step.deviceOffset(i, k), memory.result, step.hostOffset(k), step.bytes(k));
        }
        down[i].record(prepared.reduced[i][s]);
    }

    /**
     * Device j fetches the other slices of step s from {@code result}: every device's own (after
     * its reduce or publish), or with a {@code root} (a broadcast) every slice, from the root.
     */
    private void gather(int j, int s, int root) {
        OpenClPlan.Step step = steps.get(s);
        int n = devices.size();
        OpenClQueue q = up[j];
        for (int i = 0; i < n; i++) {
            if (root >= 0 ? i == root : i != j) {
                q.waitFor(prepared.reduced[i][s]);
            }
        }
        for (int k = 0; k < n; k++) {
            if ((k != j || root >= 0) && step.count()[k] > 0) {
                q.copyFromHost(memory.result, step.hostOffset(k), step.run().buffers()[j], step.deviceOffset(j, k), step.bytes(k));
            }
        }
    }

    /** A new layout: cut steps, grow host and scratch memory if needed, prepare kernels and events. */
    private void replan(List<Replica> replicas, Collective op) {
        closePrepared();
        for (int i = 0; i < done.length; i++) {
            closeQuietly(downDone[i]);
            closeQuietly(done[i]);
        }
        plan = null;
        steps = List.of();
        OpenClPlan p = OpenClPlan.of(SlicePlan.forCollective(replicas, op), devices.size(), chunkBytes);
        memory.fit(p);
        prepared = new OpenClPrepared(devices.size(), p.steps.size());
        prepared.makeEvents(devices, p.steps.size());
        prepared.prepareLaunches(up, p, memory);
        steps = p.steps;
        plan = p;
    }

    @Override
    public void barrier() {
        checkOpen();
        for (OpenClDevice d : devices) {
            d.synchronize();
        }
    }

    private void closePrepared() {
        if (prepared != null) {
            prepared.close();
            prepared = null;
        }
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
        closePrepared();
        for (int i = 0; i < done.length; i++) {
            closeQuietly(downDone[i]);
            closeQuietly(done[i]);
        }
        memory.close();
        if (failure != null) {
            throw failure;
        }
    }
}
