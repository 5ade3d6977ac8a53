package io.gradsync.sync;

import static io.gradsync.sync.Resources.closeQuietly;

import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.driver.CudaGraph;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.KernelSpec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * The project's fused average kernels compiled to PTX, one process driving N GPUs (2..8) whose
 * kernels read their peers' memory directly (P2P), in place on the replicas' own buffers.
 *
 * <p>Gradients are grouped into runs (back-to-back in one buffer, one dtype; {@link SlicePlan})
 * and each run is averaged one of two ways, chosen per run by size
 * ({@link PtxOptions#oneShotMaxBytes()}, default 1 MiB, meant to be set from a measured sweep):
 * <ul>
 * <li><b>reduce-scatter + all-gather</b> (large runs): the run is cut into N slices; GPU i
 * averages slice i of every replica ({@code average<N>} reading the peers' slices through their
 * pointers) and writes it into slice i of its own replica; then every GPU j pulls each averaged
 * slice i from GPU i with {@code cuMemcpyPeerAsync} (copy engines) into its replica.</li>
 * <li><b>one-shot</b> (small runs, only where every pair has P2P): GPU i averages the whole run,
 * reading every replica, into its own scratch, then copies scratch into its replica: one kernel
 * and one local copy, no per-slice peer copies.</li>
 * </ul>
 *
 * <p>Ordering, all on one stream per GPU, with one event per GPU and phase:
 * <ul>
 * <li>The caller's work on every GPU is done before any reduce starts: each call begins by
 * synchronizing every device (as the other backends do), since caller work may sit on any stream.</li>
 * <li>Reduce-scatter in place is safe element-wise (GPU i alone writes slice i of replica i, after
 * reading it), but GPU j's all-gather overwrites slice i of replica j, which GPU i reads in its
 * reduce; and one-shot's copy-back overwrites replica j, which every GPU reads. So every GPU's
 * second phase waits on every GPU's {@code reduced} event: the same wait also makes the averaged
 * slices available. All events of a phase are recorded, for all GPUs, before any stream waits on
 * them, so no wait can see a previous call's record.</li>
 * <li>A call ends by synchronizing every stream: the next call cannot start reducing while this
 * call's all-gathers still read slices, and the caller sees the average when the call returns.</li>
 * </ul>
 *
 * <p>Where a pair of GPUs has no P2P (or {@link PtxOptions#peerAccess()} is off), the slices
 * between them move through pinned host memory: GPU j copies slice i of its replica into its
 * host buffer (phase 0, event {@code staged}), GPU i uploads it into scratch and reads it from
 * there; GPU i also downloads its averaged slice into a shared pinned {@code result} buffer from
 * which GPU j uploads it in the all-gather. One-shot is then off (it would read peers). Results
 * are the same either way: the kernel sums the same values in the same (replica) order.
 *
 * <p>Streams and events are made once; scratch and pinned buffers grow when a larger layout
 * arrives and are kept; kernel launches are prepared, and the schedule recorded, once per layout
 * (a new layout, or new buffers, re-plan), and the last {@value #CACHED_LAYOUTS} layouts are kept
 * ready for when a caller alternates between them. The all-gather pulls with copy engines by default; {@link PtxOptions.Gather#KERNEL}
 * runs a copy kernel on the receiving GPU that reads the peer instead (SMs, lower latency per slice);
 * which is faster at which size is for the node to tell.
 *
 * <p>The schedule uses only the runtime-neutral stream API plus a {@link Launcher}; on CUDA
 * ({@link #create}) kernels are the PTX ones and peers are real. Tests also run the very same
 * schedule on JVM devices (kernels as Java, any P2P matrix), so its ordering and offsets are
 * checked in CI where there is no GPU.
 */
final class PtxSynchronizer extends LocalSynchronizer<Device> implements FusedSumOfSquares {
    /** Prepares a kernel launch on device {@code device} (index) once; launched every call. */
    @FunctionalInterface
    interface Launcher {
        Launch prepare(int device, KernelSpec spec, int count, Object[] args);
    }

    /** A prepared kernel launch. */
    @FunctionalInterface
    interface Launch {
        void launch(DeviceStream stream);
    }

    /**
     * Captures one call's whole schedule, as enqueued by {@code enqueue} starting from
     * {@code origin} (other streams fork from it and join back), for replay: a CUDA graph on GPUs.
     */
    @FunctionalInterface
    interface Recorder {
        Replay record(DeviceStream origin, Runnable enqueue);
    }

    /** A recorded schedule: {@link #replay} enqueues all of it behind {@code origin}'s prior work. */
    interface Replay extends AutoCloseable {
        void replay(DeviceStream origin);

        @Override
        void close();
    }

    private final Launcher launcher;
    /** Null: enqueue every operation on every call. */
    private final Recorder recorder;
    private final PtxOptions options;
    /** p2p[i][j]: GPUs i and j read each other's memory directly (true on the diagonal). */
    private final boolean[][] p2p;
    private final boolean allP2p;
    /** lacksPeer[i]: some GPU reads GPU i's slices through host memory. */
    private final boolean[] lacksPeer;
    private final DeviceStream[] streams;
    private final DeviceEvent[] staged;
    private final DeviceEvent[] reduced;
    /** Recorded schedules only: stream 0's start, which the others wait for, and each stream's end, which stream 0 waits for. */
    private DeviceEvent forked;
    private final DeviceEvent[] joined;
    /** Recorded on stream 0 at the end of every call. */
    private DeviceEvent done;
    /** Per GPU: the streams its all-gather pulls on, the GPU's own stream first ({@link PtxOptions#gatherLanes()}). */
    private final DeviceStream[][] gatherLanes;
    private final DeviceEvent[] gatherForked;
    private final DeviceEvent[][] gatherJoined;
    private final DeviceBuffer[] scratch;
    private final HostBuffer[] host;
    private HostBuffer result;
    /** The layout of the last call (null before the first). */
    private Layout layout;
    /**
     * Layouts used before the current one, most recent first, with their prepared launches and
     * recorded schedules: gradient buckets alternate between a few layouts every step, and
     * preparing and recording one costs milliseconds.
     */
    private final ArrayDeque<Layout> recent = new ArrayDeque<>();
    static final int CACHED_LAYOUTS = 8;

    /** One gradient layout, planned and prepared: what a call of those buffers enqueues. */
    private static final class Layout {
        final SlicePlan plan;
        /** Per run: averaged whole by every GPU (one-shot) rather than reduce-scatter + all-gather. */
        final boolean[] oneShot;
        /** Per GPU, per run: the prepared reduce or one-shot (null where it has nothing to do). */
        final Launch[][] launches;
        /** Per GPU j, per run, per peer i: the copy kernel pulling slice i (gather by kernel only). */
        final Launch[][][] gathers;
        /** Per GPU, per run: the one-shot output or the first staged slice in scratch. */
        final long[][] scratchAt;
        /** The sums of squares; null when this layout does not collect them. */
        final Squares squares;
        /** The recorded schedule: null until the layout's second call, or without a recorder. */
        Replay replay;
        /** Calls so far, the current one included: a layout is recorded on its second call. */
        int uses;

        Layout(SlicePlan plan, boolean[] oneShot, Launch[][] launches, Launch[][][] gathers, long[][] scratchAt, Squares squares) {
            this.plan = plan;
            this.oneShot = oneShot;
            this.launches = launches;
            this.gathers = gathers;
            this.scratchAt = scratchAt;
            this.squares = squares;
        }

        boolean fits(List<Replica> replicas, boolean collect) {
            return plan.madeFor(replicas) && (squares != null) == collect;
        }
    }

    /**
     * The sums of squares of a collecting layout ({@link #synchronizeSumOfSquares}): each gradient
     * is summed whole by one GPU after the all-gather (when every GPU holds the averages), the
     * gradients spread over the GPUs by size. A gradient's sum is then one kernel over exactly its
     * own elements with slot counts from its length alone: the same bits however the gradients were
     * grouped into calls or runs, and whichever GPU summed it. Per GPU: its launches in gradient
     * order and the bytes of partials to download; per gradient: its GPU, first slot and slots.
     */
    private record Squares(Launch[][] launches, int[] gpu, long[] firstSlot, int[] slots, long[] bytes) {
    }

    /** Per GPU: fp64 partial sums of squares on the device, and pinned for the host to add (grown, kept). */
    private final DeviceBuffer[] partialsDevice;
    private final HostBuffer[] partialsHost;
    /** Per GPU: the first stage's partials of large slices (grown, kept). */
    private final DeviceBuffer[] widePartials;

    static PtxSynchronizer create(List<? extends Device> devices, SyncOptions options) {
        List<CudaDevice> gpus = new ArrayList<>();
        for (Device d : devices) {
            if (!(d instanceof CudaDevice gpu)) {
                throw new UnsupportedOperationException("backend ptx needs CUDA GPUs, got " + devices.stream().map(Device::id).toList());
            }
            gpus.add(gpu);
        }
        Backends.checkKernelArity("ptx", devices);
        PtxOptions ptx = options.ptx();
        int n = gpus.size();
        boolean[][] p2p = new boolean[n][n];
        for (int i = 0; i < n; i++) {
            p2p[i][i] = true;
            for (int j = i + 1; j < n; j++) {
                CudaDevice a = gpus.get(i);
                CudaDevice b = gpus.get(j);
                boolean direct = ptx.peerAccess() && a.canAccessPeer(b) && b.canAccessPeer(a);
                if (direct) {
                    a.enablePeerAccess(b); // kernels on a read b's slices, copies on a pull from b
                    b.enablePeerAccess(a);
                }
                p2p[i][j] = direct;
                p2p[j][i] = direct;
            }
        }
        Launcher ptxKernels = (device, spec, count, args) -> {
            CudaKernels.PreparedLaunch launch = CudaKernels.prepare(gpus.get(device), spec, count, args);
            return stream -> launch.launch((CudaStream) stream);
        };
        Recorder graphs = (origin, enqueue) -> {
            CudaGraph graph = CudaGraph.capture((CudaStream) origin, enqueue);
            return new Replay() {
                @Override
                public void replay(DeviceStream stream) {
                    graph.launch((CudaStream) stream);
                }

                @Override
                public void close() {
                    graph.close();
                }
            };
        };
        return new PtxSynchronizer(gpus, ptx, p2p, ptxKernels, ptx.graph() ? graphs : null, options.waitForCaller());
    }

    /** True when ptx would read every peer directly: 2..8 CUDA GPUs, every pair with P2P. */
    static boolean usable(List<? extends Device> devices) {
        if (devices.size() < 2 || devices.size() > Backends.MAX_DEVICE_REPLICAS) {
            return false;
        }
        try {
            for (Device a : devices) {
                for (Device b : devices) {
                    if (!(a instanceof CudaDevice ga) || !(b instanceof CudaDevice gb) || !ga.canAccessPeer(gb)) {
                        return false;
                    }
                }
            }
            return true;
        } catch (RuntimeException e) {
            return false; // a driver that cannot answer cannot be relied on for P2P either
        }
    }

    /**
     * @param p2p      p2p[i][j]: device i's kernels and copies reach device j's memory directly
     *                 (symmetric, true on the diagonal)
     * @param launcher prepares the fused average kernels on each device
     * @param recorder records each layout's schedule for replay; null enqueues it on every call
     * @param waitForCaller {@link SyncOptions#waitForCaller()}
     */
    PtxSynchronizer(List<? extends Device> devices, PtxOptions options, boolean[][] p2p, Launcher launcher, Recorder recorder,
            boolean waitForCaller) {
        super(devices, waitForCaller);
        this.options = options;
        this.launcher = launcher;
        this.recorder = recorder;
        int n = devices.size();
        this.p2p = new boolean[n][];
        lacksPeer = new boolean[n];
        streams = new DeviceStream[n];
        staged = new DeviceEvent[n];
        reduced = new DeviceEvent[n];
        joined = new DeviceEvent[n];
        int lanes = Math.max(1, Math.min(options.gatherLanes(), n - 1));
        gatherLanes = new DeviceStream[n][lanes];
        gatherForked = new DeviceEvent[n];
        gatherJoined = new DeviceEvent[n][lanes];
        scratch = new DeviceBuffer[n];
        host = new HostBuffer[n];
        partialsDevice = new DeviceBuffer[n];
        partialsHost = new HostBuffer[n];
        widePartials = new DeviceBuffer[n];
        boolean all = true;
        for (int i = 0; i < n; i++) {
            this.p2p[i] = p2p[i].clone();
            for (int j = 0; j < n; j++) {
                if (p2p[i][j] != p2p[j][i] || (i == j && !p2p[i][j])) {
                    throw new IllegalArgumentException("peer matrix must be symmetric with a true diagonal");
                }
                lacksPeer[i] |= !p2p[i][j];
                all &= p2p[i][j];
            }
        }
        allP2p = all;
        if (n > 1) {
            try {
                for (int i = 0; i < n; i++) {
                    streams[i] = devices.get(i).createStream();
                    staged[i] = devices.get(i).createEvent();
                    reduced[i] = devices.get(i).createEvent();
                    joined[i] = devices.get(i).createEvent();
                    gatherLanes[i][0] = streams[i];
                    for (int l = 1; l < lanes; l++) {
                        gatherLanes[i][l] = devices.get(i).createStream();
                        gatherJoined[i][l] = devices.get(i).createEvent();
                    }
                    if (lanes > 1) {
                        gatherForked[i] = devices.get(i).createEvent();
                    }
                }
                forked = devices.getFirst().createEvent();
                done = devices.getFirst().createEvent();
            } catch (RuntimeException e) {
                release();
                throw e;
            }
        }
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.PTX;
    }

    /** Whether GPUs {@code i} and {@code j} (indices in this synchronizer) read each other directly. */
    boolean peerToPeer(int i, int j) {
        return p2p[i][j];
    }

    @Override
    protected DeviceEvent[] average(List<Replica> replicas) {
        long t0 = System.nanoTime();
        if (layout == null || !layout.fits(replicas, collect)) {
            switchLayout(replicas);
        }
        Layout l = layout;
        List<SlicePlan.Run> runs = l.plan.runs();
        if (runs.isEmpty()) {
            return null;
        }
        long planned = System.nanoTime();
        awaitCallerWorkOn(streams[0]); // every GPU forks from stream 0, and reads every replica
        long waited = System.nanoTime();
        l.uses++;
        // Recording costs about as much as a few calls: only layouts that come back are recorded
        // (buckets that go together by chance in one step are enqueued directly instead).
        if (recorder != null && l.replay == null && l.uses >= 2) {
            l.replay = recorder.record(streams[0], () -> enqueueForked(runs));
        }
        long t1 = System.nanoTime();
        // "prepare" is all of it; its parts show what a small call's fixed cost is made of
        stats.phase("prepare", t1 - t0);
        stats.phase("prepare: plan", planned - t0);
        stats.phase("prepare: wait for caller", waited - planned);
        if (l.replay != null) {
            l.replay.replay(streams[0]);
        } else {
            enqueueForked(runs);
        }
        streams[0].record(done); // stream 0 joined every other stream's end
        stats.phase("enqueue", System.nanoTime() - t1);
        DeviceEvent[] all = new DeviceEvent[devices.size()];
        Arrays.fill(all, done);
        return all;
    }

    /** A call starts on stream 0 behind the previous call's end, which joined every stream. */
    @Override
    protected boolean ordersCallsItself() {
        return true;
    }

    /** The schedule as one recordable piece: every stream forks from stream 0 and joins back into it. */
    private void enqueueForked(List<SlicePlan.Run> runs) {
        streams[0].record(forked);
        for (int i = 1; i < streams.length; i++) {
            streams[i].waitFor(forked);
        }
        enqueue(runs);
        for (int i = 1; i < streams.length; i++) {
            streams[i].record(joined[i]);
            streams[0].waitFor(joined[i]);
        }
    }

    private void enqueue(List<SlicePlan.Run> runs) {
        int n = devices.size();
        if (!allP2p) {
            stageForPeersWithoutP2p(runs);
        }
        for (int i = 0; i < n; i++) {
            reduce(i, runs);
        }
        for (int j = 0; j < n; j++) {
            gather(j, runs);
        }
    }

    /** Phase 0: GPU j puts slice i of its replica in host memory for every GPU i it has no P2P with. */
    private void stageForPeersWithoutP2p(List<SlicePlan.Run> runs) {
        int n = devices.size();
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                for (int i = 0; i < n; i++) {
                    long bytes = run.sliceCount(i) * run.dtype().bytes();
                    if (!p2p[i][j] && bytes > 0) {
                        streams[j].copyToHost(run.buffers()[j], run.sliceOffset(j, i), host[j], run.packedSliceOffset(i), bytes);
                    }
                }
            }
            streams[j].record(staged[j]);
        }
    }

    /** Phase 1 on GPU i: one-shot runs into scratch, slice i of the others in place. */
    private void reduce(int i, List<SlicePlan.Run> runs) {
        int n = devices.size();
        DeviceStream s = streams[i];
        for (int j = 0; j < n; j++) {
            if (!p2p[i][j]) {
                s.waitFor(staged[j]);
            }
        }
        for (int k = 0; k < runs.size(); k++) {
            SlicePlan.Run run = runs.get(k);
            if (layout.oneShot[k]) {
                layout.launches[i][k].launch(s);
                continue;
            }
            long bytes = run.sliceCount(i) * run.dtype().bytes();
            if (bytes == 0) {
                continue;
            }
            long at = layout.scratchAt[i][k];
            for (int j = 0; j < n; j++) {
                if (!p2p[i][j]) {
                    s.copyFromHost(host[j], run.packedSliceOffset(i), scratch[i], at, bytes);
                    at += SlicePlan.align(bytes);
                }
            }
            layout.launches[i][k].launch(s);
            if (lacksPeer[i]) {
                s.copyToHost(run.buffers()[i], run.sliceOffset(i, i), result, run.packedSliceOffset(i), bytes);
            }
        }
        s.record(reduced[i]);
    }

    /** Phase 2 on GPU j, after every GPU's reduce: copy one-shot results back, pull the other slices. */
    private void gather(int j, List<SlicePlan.Run> runs) {
        int n = devices.size();
        DeviceStream s = streams[j];
        for (int i = 0; i < n; i++) {
            if (i != j) {
                s.waitFor(reduced[i]);
            }
        }
        DeviceStream[] lanes = gatherLanes[j];
        if (lanes.length > 1) { // the extra lanes start where stream j is now: after every reduce
            s.record(gatherForked[j]);
            for (int l = 1; l < lanes.length; l++) {
                lanes[l].waitFor(gatherForked[j]);
            }
        }
        for (int k = 0; k < runs.size(); k++) {
            SlicePlan.Run run = runs.get(k);
            if (layout.oneShot[k]) {
                s.copy(scratch[j], layout.scratchAt[j][k], run.buffers()[j], run.offsets()[j], run.bytes());
                continue;
            }
            for (int i = 0; i < n; i++) {
                long bytes = run.sliceCount(i) * run.dtype().bytes();
                if (i == j || bytes == 0) {
                    continue;
                }
                // slices from different peers on different lanes: their copies can run at once
                DeviceStream lane = lanes[((i - j + n) % n - 1) % lanes.length];
                if (p2p[i][j] && layout.gathers != null) {
                    layout.gathers[j][k][i].launch(lane);
                } else if (p2p[i][j]) {
                    lane.copy(run.buffers()[i], run.sliceOffset(i, i), run.buffers()[j], run.sliceOffset(j, i), bytes);
                } else {
                    lane.copyFromHost(result, run.packedSliceOffset(i), run.buffers()[j], run.sliceOffset(j, i), bytes);
                }
            }
        }
        for (int l = 1; l < lanes.length; l++) { // stream j ends after all of its lanes
            lanes[l].record(gatherJoined[j][l]);
            s.waitFor(gatherJoined[j][l]);
        }
        if (layout.squares != null && layout.squares.bytes()[j] > 0) { // GPU j holds every average now
            for (Launch sum : layout.squares.launches()[j]) {
                sum.launch(s);
            }
            s.copyToHost(partialsDevice[j], 0, partialsHost[j], 0, layout.squares.bytes()[j]);
        }
    }

    /** Makes the layout of {@code replicas} current: a remembered one if there is one, else a new plan. */
    private void switchLayout(List<Replica> replicas) {
        if (layout != null) {
            recent.addFirst(layout);
            while (recent.size() > CACHED_LAYOUTS) {
                closeQuietly(recent.removeLast().replay);
            }
            layout = null;
        }
        for (Iterator<Layout> it = recent.iterator(); it.hasNext(); ) {
            Layout l = it.next();
            if (l.fits(replicas, collect)) {
                it.remove();
                layout = l;
                return;
            }
        }
        layout = replan(replicas);
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
                    if (p2p[i][j] && devices.get(i) instanceof CudaDevice a && !a.sameGpu((CudaDevice) devices.get(j))) {
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

    /** A new layout or new buffers: choose one-shot per run, grow scratch and pinned memory, prepare every launch. */
    private Layout replan(List<Replica> replicas) {
        refusePoolMemoryReadByPeers(replicas);
        SlicePlan p = SlicePlan.of(replicas);
        int n = devices.size();
        List<SlicePlan.Run> runs = p.runs();
        boolean[] small = new boolean[runs.size()];
        long[][] at = new long[n][runs.size()];
        for (int k = 0; k < runs.size(); k++) {
            small[k] = allP2p && runs.get(k).bytes() <= options.oneShotMaxBytes();
        }
        for (int i = 0; i < n; i++) {
            int missing = 0;
            for (int j = 0; j < n; j++) {
                missing += p2p[i][j] ? 0 : 1;
            }
            long used = 0;
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                at[i][k] = used;
                used += small[k] ? SlicePlan.align(run.bytes())
                        : missing * SlicePlan.align(run.sliceCount(i) * run.dtype().bytes());
            }
            if (used > 0 && (scratch[i] == null || scratch[i].byteSize() < used)) {
                forgetLayouts();
                closeQuietly(scratch[i]);
                scratch[i] = null;
                scratch[i] = devices.get(i).allocate(used);
            }
            if (!allP2p && (host[i] == null || host[i].byteSize() < p.packedBytes())) {
                forgetLayouts();
                closeQuietly(host[i]);
                host[i] = null;
                host[i] = devices.get(i).allocateHost(p.packedBytes());
            }
        }
        if (!allP2p && (result == null || result.byteSize() < p.packedBytes())) {
            forgetLayouts();
            closeQuietly(result);
            result = null;
            result = devices.getFirst().allocateHost(p.packedBytes()); // portable: every GPU copies from it
        }
        Launch[][] prepared = new Launch[n][runs.size()];
        float replicaCount = n; // the kernels divide their float64 sums by it
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                Object[] args = new Object[n + 2];
                args[n + 1] = replicaCount;
                int count;
                if (small[k]) {
                    count = Math.toIntExact(run.count());
                    args[0] = new DeviceSlice(scratch[i], at[i][k], count);
                    for (int j = 0; j < n; j++) {
                        args[1 + j] = new DeviceSlice(run.buffers()[j], run.offsets()[j], count);
                    }
                } else {
                    count = Math.toIntExact(run.sliceCount(i));
                    if (count == 0) {
                        continue;
                    }
                    long slot = at[i][k];
                    args[0] = new DeviceSlice(run.buffers()[i], run.sliceOffset(i, i), count);
                    for (int j = 0; j < n; j++) {
                        if (p2p[i][j]) {
                            args[1 + j] = new DeviceSlice(run.buffers()[j], run.sliceOffset(j, i), count);
                        } else {
                            args[1 + j] = new DeviceSlice(scratch[i], slot, count);
                            slot += SlicePlan.align((long) count * run.dtype().bytes());
                        }
                    }
                }
                prepared[i][k] = launcher.prepare(i, SlicePlan.averageKernel(run.dtype(), n), count, args);
            }
        }
        Launch[][][] pulls = null;
        if (options.gather() == PtxOptions.Gather.KERNEL) {
            pulls = new Launch[n][runs.size()][n];
            for (int j = 0; j < n; j++) {
                for (int k = 0; k < runs.size(); k++) {
                    SlicePlan.Run run = runs.get(k);
                    for (int i = 0; i < n; i++) {
                        int count = Math.toIntExact(run.sliceCount(i));
                        if (small[k] || i == j || !p2p[i][j] || count == 0) {
                            continue;
                        }
                        pulls[j][k][i] = launcher.prepare(j, SlicePlan.copyKernel(run.dtype()), count, new Object[] {
                            new DeviceSlice(run.buffers()[j], run.sliceOffset(j, i), count),
                            new DeviceSlice(run.buffers()[i], run.sliceOffset(i, i), count)});
                    }
                }
            }
        }
        return new Layout(p, small, prepared, pulls, at, collect ? prepareSquares(replicas) : null);
    }

    /** The partials kernels of a collecting layout, and partials buffers large enough for them. */
    private Squares prepareSquares(List<Replica> replicas) {
        int n = devices.size();
        List<Gradient> gradients = replicas.getFirst().gradients();
        int count = gradients.size();
        int[] gpu = new int[count];
        long[] firstSlot = new long[count];
        int[] slots = new int[count];
        int[] wide = new int[count]; // first-stage slots; 0: one stage
        long[] load = new long[n];
        long[] bytes = new long[n];
        long[] wideBytes = new long[n];
        for (int g = 0; g < count; g++) {
            long elements = gradients.get(g).count();
            int least = 0; // the GPU with the fewest elements so far: a fixed choice for a given list
            for (int j = 1; j < n; j++) {
                least = load[j] < load[least] ? j : least;
            }
            gpu[g] = least;
            load[least] += elements;
            SquareSlots split = SquareSlots.of(elements);
            slots[g] = split.host();
            wide[g] = split.wide();
            firstSlot[g] = bytes[least] / 8;
            bytes[least] += 8L * slots[g];
            wideBytes[least] += 8L * wide[g];
        }
        for (int i = 0; i < n; i++) {
            if (bytes[i] > 0 && (partialsDevice[i] == null || partialsDevice[i].byteSize() < bytes[i])) {
                forgetLayouts();
                closeQuietly(partialsDevice[i]);
                closeQuietly(partialsHost[i]);
                partialsDevice[i] = null;
                partialsHost[i] = null;
                partialsDevice[i] = devices.get(i).allocate(bytes[i]);
                partialsHost[i] = devices.get(i).allocateHost(bytes[i]);
            }
            if (wideBytes[i] > 0 && (widePartials[i] == null || widePartials[i].byteSize() < wideBytes[i])) {
                forgetLayouts();
                closeQuietly(widePartials[i]);
                widePartials[i] = null;
                widePartials[i] = devices.get(i).allocate(wideBytes[i]);
            }
        }
        List<List<Launch>> perGpu = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            perGpu.add(new ArrayList<>());
        }
        long[] wideSlot = new long[n];
        for (int g = 0; g < count; g++) {
            int j = gpu[g];
            int p = slots[g];
            if (p == 0) {
                continue;
            }
            Gradient grad = replicas.get(j).gradients().get(g);
            DeviceSlice averaged = new DeviceSlice(grad.buffer(), grad.byteOffset(), Math.toIntExact(grad.count()));
            DeviceSlice out = new DeviceSlice(partialsDevice[j], 8 * firstSlot[g], p);
            KernelSpec squares = SlicePlan.sumOfSquaresKernel(grad.dtype());
            if (wide[g] == 0) {
                perGpu.get(j).add(launcher.prepare(j, squares, p, new Object[] {averaged, out}));
            } else {
                DeviceSlice stage = new DeviceSlice(widePartials[j], 8 * wideSlot[j], wide[g]);
                Launch first = launcher.prepare(j, squares, wide[g], new Object[] {averaged, stage});
                Launch second = launcher.prepare(j, SlicePlan.SUM_PARTIALS, p, new Object[] {stage, out});
                perGpu.get(j).add(s -> {
                    first.launch(s);
                    second.launch(s);
                });
                wideSlot[j] += wide[g];
            }
        }
        Launch[][] launches = new Launch[n][];
        for (int i = 0; i < n; i++) {
            launches[i] = perGpu.get(i).toArray(Launch[]::new);
        }
        return new Squares(launches, gpu, firstSlot, slots, bytes);
    }

    /**
     * Averages like {@link #synchronize} and sums the squares of the averages in the same schedule,
     * in the same recorded graph: after the all-gather each GPU sums its share of the gradients
     * (each gradient whole, see {@link Squares}) into fp64 partials, added down on the GPU, that
     * the host adds in a fixed order. No second call, no second wait.
     */
    @Override
    public double[] synchronizeSumOfSquares(List<Replica> replicas) {
        return synchronizeCollecting(replicas, this::squaresOfLastCall);
    }

    /** Per gradient, from the partials the last call downloaded, added in slot order. */
    private double[] squaresOfLastCall(List<Replica> replicas) {
        Squares squares = layout.squares;
        double[] perGradient = new double[squares.slots().length];
        for (int g = 0; g < perGradient.length; g++) {
            MemorySegment partials = squares.slots()[g] == 0 ? null : partialsHost[squares.gpu()[g]].segment();
            double sum = 0;
            for (int p = 0; p < squares.slots()[g]; p++) {
                sum += partials.getAtIndex(ValueLayout.JAVA_DOUBLE, squares.firstSlot()[g] + p);
            }
            perGradient[g] = sum;
        }
        return perGradient;
    }

    @Override
    protected void release() {
        RuntimeException failure = null;
        for (DeviceStream s : streams) {
            if (s != null) {
                try {
                    s.synchronize();
                } catch (RuntimeException e) {
                    failure = failure == null ? e : failure;
                }
                closeQuietly(s);
            }
        }
        if (layout != null) {
            closeQuietly(layout.replay);
        }
        forgetLayouts();
        for (DeviceStream[] lanes : gatherLanes) {
            for (int l = 1; l < lanes.length; l++) {
                closeQuietly(lanes[l]);
            }
        }
        for (DeviceEvent[] joinedLanes : gatherJoined) {
            for (DeviceEvent e : joinedLanes) {
                closeQuietly(e);
            }
        }
        for (DeviceEvent[] events : new DeviceEvent[][] {staged, reduced, joined, gatherForked, {forked, done}}) {
            for (DeviceEvent e : events) {
                closeQuietly(e);
            }
        }
        for (int i = 0; i < scratch.length; i++) {
            closeQuietly(scratch[i]);
            closeQuietly(host[i]);
            closeQuietly(partialsDevice[i]);
            closeQuietly(partialsHost[i]);
            closeQuietly(widePartials[i]);
        }
        closeQuietly(result);
        if (failure != null) {
            throw failure;
        }
    }
}
