package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.Replica;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.SlicePlan;
import static io.gradsync.sync.backend.Resources.closeQuietly;

import io.gradsync.sync.backend.ptx.PtxLaunches.Launch;
import io.gradsync.sync.backend.ptx.PtxLaunches.Launcher;
import io.gradsync.sync.backend.ptx.PtxLaunches.Replay;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.kernels.DeviceSlice;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;

/**
 * The ptx backend's layout cache: the layout of the last call, planned and prepared (its runs,
 * one-shot or reduce-scatter per run, scratch offsets, every prepared launch, and once it comes
 * back its recorded schedule), and the {@value #CACHED_LAYOUTS} layouts used before it, most recent
 * first, for callers that alternate between a few layouts every step (preparing and recording one
 * costs milliseconds). A layout not remembered is planned anew ({@link #replan}), growing the
 * {@link PtxMemory} it needs; growing a buffer drops the remembered layouts, which point into it.
 *
 * <p>Thread-safety: none; used only under the {@link PtxSynchronizer}'s lock (its calls are serialized).
 */
final class PtxLayouts {
    static final int CACHED_LAYOUTS = 8;

    /** One gradient layout and collective, planned and prepared: what a call of those buffers enqueues. */
    static final class Layout {
        final SlicePlan plan;
        final Collective op;
        /** Per run: averaged in one pass (each GPU writes its slice's average into every replica) rather than reduce-scatter + all-gather. */
        final boolean[] oneShot;
        /** Every run one-shot and averaged whole by GPU 0 ({@link PtxOptions#oneGpuMaxBytes()}): its launches alone, no fork. */
        final boolean oneGpu;
        /** Per GPU, per run: the prepared reduce or one-shot average of its slice, or GPU 0's of the whole run (null where it has nothing to do). */
        final Launch[][] launches;
        /**
         * Per GPU j, per run, per peer i: the kernel pulling slice i (null: a copy engine's copy): the
         * copy kernel (gather by kernel), or on a wired run the widening of GPU i's 16-bit average.
         */
        final Launch[][][] gathers;
        /** Per run: fp32 on a 16-bit wire, its conversions fused into the schedule (see {@link PtxLayouts}). */
        final boolean[] wired;
        /** Per GPU j, per wired run, per GPU i: rounding slice i of replica j into GPU i's wire buffer (null elsewhere). */
        final Launch[][][] sends;
        /** Per GPU i, per wired run: widening its 16-bit average into slice i of replica i (null elsewhere). */
        final Launch[][] widenOwn;
        /** Taken once: the schedule asks per GPU and peer at every enqueue. */
        private final boolean anyWired;
        /** Per GPU, per run: where its first slice staged from a peer without P2P goes in scratch. */
        final long[][] scratchAt;
        /** The sums of squares; null when this layout does not collect them. */
        final PtxSquares.Squares squares;
        /** The recorded schedule: null until the layout's second call, or without a recorder. */
        Replay replay;
        /** Calls so far, the current one included: a layout is recorded on its second call. */
        int uses;

        Layout(SlicePlan plan, Collective op, boolean[] oneShot, boolean oneGpu, Launch[][] launches, Launch[][][] gathers,
                long[][] scratchAt, PtxSquares.Squares squares, boolean[] wired, Launch[][][] sends, Launch[][] widenOwn) {
            this.plan = plan;
            this.op = op;
            this.oneShot = oneShot;
            this.oneGpu = oneGpu;
            this.launches = launches;
            this.gathers = gathers;
            this.scratchAt = scratchAt;
            this.squares = squares;
            this.wired = wired;
            this.sends = sends;
            this.widenOwn = widenOwn;
            this.anyWired = anyTrue(wired);
        }

        /** Whether some run goes on a 16-bit wire (the schedule then starts with the sends). */
        boolean anyWired() {
            return anyWired;
        }

        boolean fits(List<Replica> replicas, boolean collect, Collective op) {
            return this.op.equals(op) && plan.madeFor(replicas, op) && (squares != null) == collect;
        }
    }

    private final List<? extends Device> devices;
    private final PtxOptions options;
    private final PtxPeers peers;
    private final Launcher launcher;
    private final PtxMemory memory;
    private final PtxSquares squares;
    /** The type fp32 runs of averages and reduce-scatters cross on; FP32: as they are. */
    private final DType wire;
    /** The layout of the last call (null before the first). */
    private Layout layout;
    /** Layouts used before the current one, most recent first, with their prepared launches and recorded schedules. */
    private final ArrayDeque<Layout> recent = new ArrayDeque<>();

    PtxLayouts(List<? extends Device> devices, PtxOptions options, PtxPeers peers, Launcher launcher, PtxMemory memory,
            PtxSquares squares, DType wire) {
        this.devices = devices;
        this.options = options;
        this.peers = peers;
        this.launcher = launcher;
        this.memory = memory;
        this.squares = squares;
        this.wire = wire;
    }

    /** The layout of the last call (null before the first, or after a failed plan). */
    Layout current() {
        return layout;
    }

    /** The layout of {@code replicas} and {@code op}, made current: the current one if it fits, a remembered one, or a new plan. */
    Layout of(List<Replica> replicas, boolean collect, Collective op) {
        if (layout == null || !layout.fits(replicas, collect, op)) {
            switchLayout(replicas, collect, op);
        }
        return layout;
    }

    /** Makes the layout of {@code replicas} and {@code op} current: a remembered one if there is one, else a new plan. */
    private void switchLayout(List<Replica> replicas, boolean collect, Collective op) {
        if (layout != null) {
            recent.addFirst(layout);
            while (recent.size() > CACHED_LAYOUTS) {
                closeQuietly(recent.removeLast().replay);
            }
            layout = null;
        }
        for (Iterator<Layout> it = recent.iterator(); it.hasNext(); ) {
            Layout l = it.next();
            if (l.fits(replicas, collect, op)) {
                it.remove();
                layout = l;
                return;
            }
        }
        layout = replan(replicas, collect, op);
    }

    /**
     * Peer GPUs read and copy each replica's memory directly; memory of a stream-ordered pool grants
     * that only through the pool's own access settings (not peer access between contexts), so such
     * a read would fault and take the context with it. Refused before anything moves.
     */
    private void refusePoolMemoryReadByPeers(List<Replica> replicas) {
        for (int j = 0; j < replicas.size(); j++) {
            for (Gradient g : replicas.get(j).gradients()) {
                if (!(g.buffer() instanceof CudaBuffer b) || !b.isFromPool()) {
                    continue;
                }
                for (int i = 0; i < replicas.size(); i++) {
                    if (peers.direct(i, j) && devices.get(i) instanceof CudaDevice a && !a.sameGpu((CudaDevice) devices.get(j))) {
                        throw new IllegalArgumentException("ptx: gradient '" + g.name() + "' of replica " + j + " ("
                                + devices.get(j).id() + ") is in stream-ordered pool memory (cudaMallocAsync), which "
                                + devices.get(i).id() + " would read directly, and a pool grants peers no access by default; "
                                + "use cuMemAlloc / cudaMalloc memory, or the cpu or nccl backend for it");
                    }
                }
            }
        }
    }

    /** Remembered layouts point into scratch and pinned buffers about to be replaced: drop them. */
    private void forgetLayouts() {
        for (Layout l : recent) {
            closeQuietly(l.replay);
        }
        recent.clear();
    }

    /**
     * A new layout or new buffers: choose one-shot per run (averages only), grow scratch and pinned
     * memory, prepare every launch the collective makes.
     */
    private Layout replan(List<Replica> replicas, boolean collect, Collective op) {
        refusePoolMemoryReadByPeers(replicas);
        SlicePlan p = SlicePlan.forCollective(replicas, op);
        int n = devices.size();
        List<SlicePlan.Run> runs = p.runs();
        boolean[] small = new boolean[runs.size()];
        boolean[] wired = new boolean[runs.size()];
        long[][] at = new long[n][runs.size()];
        long[][] wireAt = new long[n][runs.size()];
        boolean allSmall = true;
        long bytes = 0;
        for (int k = 0; k < runs.size(); k++) {
            wired[k] = wire != DType.FP32 && n > 1 && op.sums() && peers.all() && runs.get(k).dtype() == DType.FP32;
            small[k] = op.kind() == Collective.Kind.ALL_REDUCE && peers.all() && runs.get(k).bytes() <= options.oneShotMaxBytes()
                    && !wired[k];
            allSmall &= small[k];
            bytes += runs.get(k).bytes();
        }
        boolean oneGpu = allSmall && !collect && options.oneGpuMaxBytes() > 0 && (bytes <= options.oneGpuMaxBytes() || oneChip());
        for (int i = 0; i < n; i++) {
            int missing = 0;
            for (int j = 0; j < n; j++) {
                missing += peers.direct(i, j) ? 0 : 1;
            }
            long used = 0;
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                at[i][k] = used;
                used += small[k] || !op.sums() ? 0 : missing * SlicePlan.align(run.sliceCount(i) * run.dtype().bytes());
            }
            if (used > 0) {
                memory.growScratch(i, used, this::forgetLayouts);
            }
            long onWire = 0;
            for (int k = 0; k < runs.size(); k++) { // n slots the replicas send, then their average
                wireAt[i][k] = onWire;
                onWire += wired[k] ? (n + 1) * SlicePlan.align(runs.get(k).sliceCount(i) * wire.bytes()) : 0;
            }
            if (onWire > 0) {
                memory.growWire(i, onWire, this::forgetLayouts);
            }
            if (!peers.all()) {
                memory.growHost(i, p.packedBytes(), this::forgetLayouts);
            }
        }
        if (!peers.all()) {
            memory.growResult(p.packedBytes(), this::forgetLayouts);
        }
        Launch[][] prepared = new Launch[n][runs.size()];
        float replicaCount = n; // the kernels divide their float64 sums by it
        for (int k = 0; k < runs.size() && oneGpu; k++) { // GPU 0, every replica's whole run
            SlicePlan.Run run = runs.get(k);
            int count = Math.toIntExact(run.count());
            if (count == 0) {
                continue;
            }
            Object[] args = new Object[n + 1];
            args[n] = replicaCount;
            for (int j = 0; j < n; j++) {
                args[j] = new DeviceSlice(run.buffers()[j], run.offsets()[j], count);
            }
            prepared[0][k] = launcher.prepare(0, SlicePlan.inPlaceAverageKernel(run.dtype(), n), count, args);
        }
        for (int i = 0; i < n && op.sums() && !oneGpu; i++) {
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                int count = Math.toIntExact(run.sliceCount(i));
                if (count == 0) {
                    continue;
                }
                if (wired[k]) {
                    continue; // below
                }
                if (small[k]) { // slice i of every replica, averaged and written back into all of them
                    Object[] args = new Object[n + 1];
                    args[n] = replicaCount;
                    for (int j = 0; j < n; j++) {
                        args[j] = new DeviceSlice(run.buffers()[j], run.sliceOffset(j, i), count);
                    }
                    prepared[i][k] = launcher.prepare(i, SlicePlan.inPlaceAverageKernel(run.dtype(), n), count, args);
                    continue;
                }
                Object[] args = new Object[n + 2];
                args[n + 1] = replicaCount;
                long slot = at[i][k];
                args[0] = new DeviceSlice(run.buffers()[i], run.sliceOffset(i, i), count);
                for (int j = 0; j < n; j++) {
                    if (peers.direct(i, j)) {
                        args[1 + j] = new DeviceSlice(run.buffers()[j], run.sliceOffset(j, i), count);
                    } else {
                        args[1 + j] = new DeviceSlice(memory.scratch(i), slot, count);
                        slot += SlicePlan.align((long) count * run.dtype().bytes());
                    }
                }
                prepared[i][k] = launcher.prepare(i, SlicePlan.averageKernel(run.dtype(), n), count, args);
            }
        }
        Launch[][][] pulls = null;
        boolean anyWired = anyTrue(wired);
        if ((options.gather() == PtxOptions.Gather.KERNEL || anyWired) && op.kind() != Collective.Kind.REDUCE_SCATTER) {
            pulls = new Launch[n][runs.size()][n];
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < runs.size(); k++) {
                    SlicePlan.Run run = runs.get(k);
                    for (int i = 0; i < n; i++) {
                        int count = Math.toIntExact(run.sliceCount(i));
                        if (small[k] || wired[k] || i == j || !peers.direct(i, j) || count == 0
                                || options.gather() != PtxOptions.Gather.KERNEL) {
                            continue;
                        }
                        pulls[j][k][i] = launcher.prepare(j, SlicePlan.copyKernel(run.dtype()), count, new Object[] {
                            new DeviceSlice(run.buffers()[j], run.sliceOffset(j, i), count),
                            new DeviceSlice(run.buffers()[i], run.sliceOffset(i, i), count)});
                    }
                }
            }
        }
        Launch[][][] sends = new Launch[n][runs.size()][n];
        Launch[][] widenOwn = new Launch[n][runs.size()];
        for (int k = 0; k < runs.size() && anyWired; k++) {
            if (wired[k]) {
                prepareWired(runs.get(k), k, wireAt, replicaCount, prepared, pulls, sends, widenOwn);
            }
        }
        return new Layout(p, op, small, oneGpu, prepared, pulls, at, collect ? squares.prepare(replicas, this::forgetLayouts) : null,
                wired, sends, widenOwn);
    }

    /**
     * A run of fp32 on the 16-bit wire, its conversions fused into the schedule: GPU j rounds slice
     * i of its replica straight into slot j of GPU i's wire buffer (the send: a peer's store, so the
     * link carries 16 bits an element); GPU i averages its n slots there into the wire buffer's last
     * slot as any 16-bit run is averaged (float64 sum in replica order, rounded once) and widens it
     * into its replica; every other GPU then pulls that average across the link, widening it as it
     * lands. The same bits as rounding into scratch, averaging the 16-bit scratch and widening back,
     * with two passes over the gradients and half of the link's bytes fewer.
     */
    private void prepareWired(SlicePlan.Run run, int k, long[][] wireAt, float replicaCount, Launch[][] reduces,
            Launch[][][] pulls, Launch[][][] sends, Launch[][] widenOwn) {
        int n = devices.size();
        for (int i = 0; i < n; i++) {
            int count = Math.toIntExact(run.sliceCount(i));
            if (count == 0) {
                continue;
            }
            long slot = SlicePlan.align((long) count * wire.bytes());
            DeviceSlice average = new DeviceSlice(memory.wire(i), wireAt[i][k] + n * slot, count);
            Object[] args = new Object[n + 2];
            args[0] = average;
            args[n + 1] = replicaCount;
            for (int j = 0; j < n; j++) {
                DeviceSlice sent = new DeviceSlice(memory.wire(i), wireAt[i][k] + j * slot, count);
                args[1 + j] = sent;
                sends[j][k][i] = launcher.prepare(j, SlicePlan.narrowKernel(wire), count,
                        new Object[] {new DeviceSlice(run.buffers()[j], run.sliceOffset(j, i), count), sent});
                if (pulls != null && j != i) {
                    pulls[j][k][i] = launcher.prepare(j, SlicePlan.widenKernel(wire), count,
                            new Object[] {average, new DeviceSlice(run.buffers()[j], run.sliceOffset(j, i), count)});
                }
            }
            reduces[i][k] = launcher.prepare(i, SlicePlan.averageKernel(wire, n), count, args);
            widenOwn[i][k] = launcher.prepare(i, SlicePlan.widenKernel(wire), count,
                    new Object[] {average, new DeviceSlice(run.buffers()[i], run.sliceOffset(i, i), count)});
        }
    }

    private static boolean anyTrue(boolean[] flags) {
        for (boolean f : flags) {
            if (f) {
                return true;
            }
        }
        return false;
    }

    /** Whether every device is a logical device of the first one's GPU: one chip, no link between replicas. */
    private boolean oneChip() {
        if (!(devices.getFirst() instanceof CudaDevice first)) {
            return false;
        }
        for (Device d : devices) {
            if (!(d instanceof CudaDevice gpu) || !gpu.sameGpu(first)) {
                return false;
            }
        }
        return true;
    }

    /** Closes the current layout's recorded schedule and every remembered one; called once, after the streams are done. */
    void release() {
        if (layout != null) {
            closeQuietly(layout.replay);
        }
        forgetLayouts();
    }
}
