package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.DType;
import io.gradsync.sync.FusedSumOfSquares;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.DeviceChecks;
import io.gradsync.sync.backend.FusedWire;
import io.gradsync.sync.backend.LocalSynchronizer;
import io.gradsync.sync.backend.SlicePlan;
import io.gradsync.sync.backend.ptx.PtxLayouts.Layout;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.driver.CudaGraph;
import io.gradsync.tasks.cuda.driver.CudaHandles;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import java.util.ArrayList;
import java.util.Arrays;
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
 * <li><b>one-shot</b> (small runs, only where every pair has P2P): GPU i averages slice i of
 * every replica and writes the average into slice i of every replica ({@code averageInPlace<N>},
 * storing into the peers through their pointers): one kernel per GPU, no copies. It needs no
 * order between GPUs within the call: GPU i alone reads and writes slice i. A call whose runs are
 * all one-shot and small ({@link PtxOptions#oneGpuMaxBytes()}, or replicas all on one chip) is
 * averaged by GPU 0 alone, one kernel per whole run: its recorded schedule has no fork to the other
 * GPUs' streams, which costs the host less per call.</li>
 * </ul>
 *
 * <p>Ordering, all on one stream per GPU, with one event per GPU and phase:
 * <ul>
 * <li>The caller's work on every GPU is done before any reduce starts: each call begins by
 * synchronizing every device (as the other backends do), since caller work may sit on any stream.</li>
 * <li>Reduce-scatter in place is safe element-wise (GPU i alone writes slice i of replica i, after
 * reading it), but GPU j's all-gather overwrites slice i of replica j, which GPU i reads in its
 * reduce. So every GPU's second phase waits on every GPU's {@code reduced} event: the same wait
 * also makes the averaged slices available (and, for the sums of squares, the one-shot runs'). All events of a phase are recorded, for all GPUs, before any stream waits on
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
 * (a new layout, or new buffers, re-plan), and the last {@value PtxLayouts#CACHED_LAYOUTS} layouts are kept
 * ready for when a caller alternates between them. The all-gather pulls with copy engines by default; {@link PtxOptions.Gather#KERNEL}
 * runs a copy kernel on the receiving GPU that reads the peer instead (SMs, lower latency per slice);
 * which is faster at which size is for the node to tell.
 *
 * <p>On a 16-bit wire ({@link SyncOptions#wire()}, every pair with P2P) an average's or
 * reduce-scatter's fp32 runs go through the wire inside this schedule: GPU j rounds slice i of its
 * replica straight into GPU i's wire buffer (a store across the link, 16 bits an element), GPU i
 * averages those 16-bit slices as any 16-bit run and widens the average into its replica, and the
 * all-gather widens each average as it pulls it. The same bits as rounding into scratch, averaging
 * that and widening back ({@code WireSynchronizer}, which wraps ptx where some pair lacks P2P), without
 * the two passes over the whole gradients between the transfers.
 *
 * <p>The other collectives are parts of the same schedule ({@link PtxSchedule}): a reduce-scatter
 * is the reduce alone, over slices cut by shard ({@link SlicePlan#sharded}); an all-gather is the
 * all-gather alone, over the same slices; a broadcast is a scatter (GPU i pulls slice i from the
 * root) then the all-gather, so that the root sends each byte about twice rather than N - 1 times.
 *
 * <p>The schedule uses only the runtime-neutral stream API plus a {@link PtxLaunches.Launcher}; on CUDA
 * ({@link #create}) kernels are the PTX ones and peers are real. Tests also run the very same
 * schedule on JVM devices (kernels as Java, any P2P matrix), so its ordering and offsets are
 * checked in CI where there is no GPU.
 *
 * <p>This class coordinates a call (layout, caller's work, record or replay, stats); its parts do
 * one job each: {@link PtxPeers} the P2P matrix (and, on CUDA, enabling peer access),
 * {@link PtxLayouts} the layout cache (plans, prepared launches, recorded schedules),
 * {@link PtxSchedule} the streams, events and the schedule enqueued on them, {@link PtxSquares}
 * the fused sums of squares, {@link PtxMemory} the grown scratch and pinned buffers.
 *
 * <p>Thread-safety: calls are serialized on the synchronizer ({@link LocalSynchronizer}); its parts
 * are used only from within those calls.
 */
final class PtxSynchronizer extends LocalSynchronizer<Device> implements FusedSumOfSquares, FusedWire {
    /**
     * System property: {@code false} leaves a 16-bit wire to the wire around the backend (narrowing
     * and widening passes around a 16-bit average), for comparing the two; default {@code true}.
     */
    static final String FUSED_WIRE_PROPERTY = "gradsync.ptx.fusedWire";

    /** Null: enqueue every operation on every call. */
    private final PtxLaunches.Recorder recorder;
    private final PtxPeers peers;
    private final PtxMemory memory;
    private final PtxSquares squares;
    private final PtxLayouts layouts;
    private final PtxSchedule schedule;
    private final DType wire;

    /** @param wire the 16-bit type fp32 gradients cross as, fused into the schedule where every pair has P2P; FP32: none */
    static PtxSynchronizer create(List<? extends Device> devices, PtxOptions ptx, boolean waitForCaller, DType wire) {
        List<CudaDevice> gpus = new ArrayList<>();
        for (Device d : devices) {
            if (!(d instanceof CudaDevice gpu)) {
                throw new UnsupportedOperationException("backend ptx needs CUDA GPUs, got " + devices.stream().map(Device::id).toList());
            }
            gpus.add(gpu);
        }
        DeviceChecks.checkKernelArity("ptx", devices);
        boolean[][] p2p = PtxPeers.enable(gpus, ptx);
        PtxLaunches.Launcher ptxKernels = (device, spec, count, args) -> {
            CudaKernels.PreparedLaunch launch = CudaKernels.prepare(gpus.get(device), spec, count, args);
            return stream -> launch.launch((CudaStream) stream);
        };
        PtxLaunches.Recorder graphs = new PtxLaunches.Recorder() {
            @Override
            public PtxLaunches.Replay record(DeviceStream origin, Runnable enqueue) {
                CudaGraph graph = CudaGraph.capture((CudaStream) origin, enqueue);
                return new PtxLaunches.Replay() {
                    @Override
                    public void replay(DeviceStream stream) {
                        graph.launch((CudaStream) stream);
                    }

                    @Override
                    public void close() {
                        graph.close();
                    }
                };
            }

            @Override
            public void waitOutside(DeviceStream stream, DeviceEvent event) {
                CudaHandles.waitForExternal((CudaStream) stream, event);
            }
        };
        return new PtxSynchronizer(gpus, ptx, p2p, ptxKernels, ptx.graph() ? graphs : null, waitForCaller, wire);
    }

    /** True when ptx would read every peer directly: 2..8 CUDA GPUs, every pair with P2P. */
    static boolean usable(List<? extends Device> devices) {
        return PtxPeers.usable(devices);
    }

    /**
     * @param p2p      p2p[i][j]: device i's kernels and copies reach device j's memory directly
     *                 (symmetric, true on the diagonal)
     * @param launcher prepares the fused average kernels on each device
     * @param recorder records each layout's schedule for replay; null enqueues it on every call
     * @param waitForCaller {@link SyncOptions#waitForCaller()}
     * @param wire     the 16-bit type fp32 averages cross as, where every pair has P2P and there are
     *                 two replicas or more; FP32: as they are ({@link #wire()} says which it is)
     */
    PtxSynchronizer(List<? extends Device> devices, PtxOptions options, boolean[][] p2p, PtxLaunches.Launcher launcher, PtxLaunches.Recorder recorder,
            boolean waitForCaller, DType wire) {
        super(devices, waitForCaller);
        this.recorder = recorder;
        int n = devices.size();
        peers = new PtxPeers(p2p, n);
        this.wire = peers.all() && n > 1 ? wire : DType.FP32;
        memory = new PtxMemory(this.devices);
        squares = new PtxSquares(this.devices, launcher, memory);
        layouts = new PtxLayouts(this.devices, options, peers, launcher, memory, squares, this.wire);
        schedule = new PtxSchedule(this.devices, options, peers, memory, squares);
        if (n > 1) {
            try {
                schedule.open();
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

    @Override
    public DType wire() {
        return wire;
    }

    /** Whether GPUs {@code i} and {@code j} (indices in this synchronizer) read each other directly. */
    boolean peerToPeer(int i, int j) {
        return peers.direct(i, j);
    }

    @Override
    protected DeviceEvent[] perform(List<Replica> replicas, Collective op) {
        long t0 = System.nanoTime();
        Layout l = layouts.of(replicas, collect, op);
        List<SlicePlan.Run> runs = l.plan.runs();
        if (runs.isEmpty()) {
            return null;
        }
        l.uses++;
        // Recording costs about as much as a few calls: only layouts that come back are recorded
        // (buckets that go together by chance in one step are enqueued directly instead). A
        // recording starts with stream 0's waits for the caller's streams' events, made at each
        // call: one call per replica fewer than waiting from the host each time.
        DeviceStream origin = schedule.origin();
        if (recorder != null && l.replay == null && l.uses >= 2) {
            DeviceEvent[] ready = callerReadyEvents();
            l.replay = recorder.record(origin, () -> {
                for (DeviceEvent e : ready) {
                    recorder.waitOutside(origin, e);
                }
                schedule.enqueueForked(l);
            });
        }
        long planned = System.nanoTime();
        if (l.replay != null) {
            markCallerWork();
        } else {
            awaitCallerWorkOn(origin); // every GPU forks from stream 0, and reads every replica
        }
        long t1 = System.nanoTime();
        // "prepare" is all of it; its parts show what a small call's fixed cost is made of
        stats.phase("prepare", t1 - t0);
        stats.phase("prepare: plan", planned - t0);
        stats.phase("prepare: wait for caller", t1 - planned);
        if (l.replay != null) {
            l.replay.replay(origin);
        } else {
            schedule.enqueueForked(l);
        }
        DeviceEvent done = schedule.recordDone(); // stream 0 joined every other stream's end
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

    /**
     * Averages like {@link #synchronize} and sums the squares of the averages in the same schedule,
     * in the same recorded graph: after the all-gather each GPU sums its share of the gradients
     * (each gradient whole, see {@link PtxSquares.Squares}) into fp64 partials, added down on the
     * GPU, that the host adds in a fixed order. No second call, no second wait.
     */
    @Override
    public double[] synchronizeSumOfSquares(List<Replica> replicas) {
        return synchronizeCollecting(replicas, this::squaresOfLastCall);
    }

    /** Per gradient, from the partials the last call downloaded, added in slot order. */
    private double[] squaresOfLastCall(List<Replica> replicas) {
        return squares.read(layouts.current().squares);
    }

    @Override
    protected void release() {
        RuntimeException failure = schedule.closeStreams();
        layouts.release();
        schedule.closeLanesAndEvents();
        memory.release();
        if (failure != null) {
            throw failure;
        }
    }
}
