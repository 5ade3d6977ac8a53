package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.CpuOptions;
import io.gradsync.sync.FusedSumOfSquares;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.LocalSynchronizer;
import io.gradsync.sync.internal.HostAverage;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.HostFlag;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.Function;

/**
 * Host staging: every replica's gradients are copied into pinned host memory, averaged there on
 * all cores, and the average is copied back to every device.
 *
 * <p>The gradients are cut into chunks ({@link StagingPlan}) that flow through a ring of
 * {@code slots} pinned slots per device ({@link StagingRing}), summed by host threads
 * ({@link StagingWorkers}); the synchronous call runs them as a pipeline ({@link StagingPipeline}).
 * Memory, streams, events and threads are made once, at construction; a call allocates only its
 * plan when the gradient layout changes.
 *
 * <p>On JVM devices the replicas are host memory already: without caller streams (or the fused sum
 * of squares) they are averaged where they are ({@link HostInPlace}), by the same workers, with no
 * staging copies.
 *
 * <p>The asynchronous call on the caller's streams ({@link StagingAhead}) cannot queue copies as
 * sums finish: the caller's next work is queued right after it returns, and a copy queued behind
 * that work's wait in a shared hardware queue would never run. It queues every chunk's copies at
 * once instead, the slot reuse and the copies back gated on the device by host flags that the
 * background sums raise; the ring is the same.
 */
final class CpuStagingSynchronizer extends LocalSynchronizer<Device> implements FusedSumOfSquares {
    /** Smallest chunk worth a worker: smaller ones cost more in events than they save in overlap. */
    private static final long MIN_CHUNK_BYTES = 1 << 20;
    /**
     * The fused sum of squares adds cells of this size (or the chunk size where that is smaller), each
     * summed whole, in order along each gradient: cut where the plan cuts, the sums would depend on
     * what else shares the call (bucket grouping), and so would the global norm.
     */
    private static final long CELL_BYTES = 64 << 10;

    private final CpuOptions options;
    private final StagingRing ring;
    private final StagingWorkers workers;
    private final StagingPipeline pipeline;
    private final StagingAhead ahead;
    private StagingPlan plan;
    /** The JVM devices' gradient views of the last call's replicas ({@link HostInPlace}). */
    private final HostInPlace.Views inPlaceViews = new HostInPlace.Views();
    /**
     * Per chunk of the current call, the float64 sums of squares of the averaged values of its
     * pieces' cells, piece by piece (null when not collecting). Added up per gradient in order at the
     * end, so the result depends neither on which worker finished first nor on the chunking.
     */
    private volatile double[][] chunkSquares;

    CpuStagingSynchronizer(List<? extends Device> devices, CpuOptions options, boolean waitForCaller) {
        super(devices, waitForCaller);
        this.options = options;
        this.ring = new StagingRing(this.devices, options);
        this.workers = new StagingWorkers(this.devices.size(), options);
        this.pipeline = new StagingPipeline(ring, workers, stats);
        this.ahead = new StagingAhead(this.devices, ring, workers, stats);
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.CPU;
    }

    /** The host sums: an asynchronous call runs the pipeline in the background. */
    @Override
    protected boolean averagesOnHost() {
        return true;
    }

    @Override
    public double[] synchronizeSumOfSquares(List<Replica> replicas) {
        return synchronizeCollecting(replicas, this::squaresOfLastCall);
    }

    /** Per gradient, its cells' sums added in order along it (chunk by chunk, piece by piece). */
    private double[] squaresOfLastCall(List<Replica> replicas) {
        double[] perGradient = new double[replicas.getFirst().gradients().size()];
        double[][] squares = chunkSquares;
        chunkSquares = null;
        for (int k = 0; squares != null && k < squares.length; k++) {
            int c = 0;
            for (StagingPlan.Piece p : plan.chunks().get(k).pieces()) {
                for (long cells = cellsOf(p); cells > 0; cells--) {
                    perGradient[p.gradient()] += squares[k][c++];
                }
            }
        }
        return perGradient;
    }

    /** Cells of the fused sum: independent of the layout (a plan's chunks may be smaller than the option). */
    private long cellBytes() {
        return Math.min(CELL_BYTES, options.chunkBytes());
    }

    private long cellsOf(StagingPlan.Piece p) {
        long cell = cellBytes() / p.dtype().bytes();
        return (p.count() + cell - 1) / cell;
    }

    /** The chunks of this layout, planned anew only when it changed. */
    private List<StagingPlan.Chunk> chunksOf(List<Replica> replicas) {
        List<Gradient> layout = replicas.getFirst().gradients();
        if (plan == null || !plan.fits(layout)) {
            plan = StagingPlan.of(layout, chunkBytesFor(layout), cellBytes());
        }
        return plan.chunks();
    }

    @Override
    protected DeviceEvent[] perform(List<Replica> replicas, Collective op) {
        long t0 = System.nanoTime();
        List<StagingPlan.Chunk> chunks = chunksOf(replicas);
        chunkSquares = collect ? new double[chunks.size()][] : null;
        if (chunks.isEmpty()) {
            return null;
        }
        if (inPlaceViews.applies(replicas)) { // JVM devices: the replicas are host memory already
            awaitCallerWorkOnHost(); // a synchronous call: its replicas' streams (JVM devices') waited for here
            long t1 = System.nanoTime();
            stats.phase("prepare", t1 - t0);
            RuntimeException failure = HostInPlace.run(replicas, chunks, op, workers, inPlaceViews, chunkSquares, this::cellSquares);
            stats.phase("in place", System.nanoTime() - t1);
            if (failure != null) {
                throw failure;
            }
            return null;
        }
        awaitCallerWork(ring.down);
        long t1 = System.nanoTime();
        stats.phase("prepare", t1 - t0);
        RuntimeException failure = pipeline.run(replicas, chunks, op, sumFor(op, replicas));
        long t3 = System.nanoTime();
        stats.phase("pipeline", t3 - t1);
        if (failure != null) {
            throw ring.settle(failure);
        }
        for (int r = 0; r < ring.up.length; r++) {
            ring.up[r].record(ring.done[r]); // after the last uploads; the next call's slots wait on their own events
        }
        return ring.done;
    }

    /** The asynchronous call on the caller's streams: every chunk's copies are queued now ({@link StagingAhead}). */
    @Override
    protected Ahead queueAhead(List<Replica> replicas, HostFlag[] flags, Collective op) {
        long t0 = System.nanoTime();
        List<StagingPlan.Chunk> chunks = chunksOf(replicas);
        chunkSquares = null;
        return ahead.queue(replicas, chunks, op, flags, () -> awaitCallerWork(ring.down), sumFor(op, replicas), t0);
    }

    /** What a worker does with a staged chunk: the average, or the copy of the replicas' parts that {@code op} reads into the result. */
    private StagingPipeline.ChunkSum sumFor(Collective op, List<Replica> replicas) {
        if (op.sums()) {
            return this::reduce;
        }
        List<Gradient> layout = replicas.getFirst().gradients();
        int n = devices.size();
        return (chunk, slot, in, k) -> {
            long base = slot * options.chunkBytes();
            for (StagingPlan.Piece p : chunk.pieces()) {
                int size = p.dtype().bytes();
                for (int r = 0; r < n; r++) {
                    MemorySegment from = ring.staging[r].segment();
                    op.reads(r, n, layout.get(p.gradient()).count(), p.first(), p.first() + p.count(), (lo, hi) -> {
                        long at = base + p.slotOffset() + (lo - p.first()) * size;
                        ring.result.segment().asSlice(at, (hi - lo) * size).copyFrom(from.asSlice(at, (hi - lo) * size));
                    });
                }
            }
        };
    }

    /**
     * Chunks small enough that every worker gets some (a 1 MiB sync is spread over several
     * threads), large enough that events and copies are not the cost, never above a slot.
     */
    private long chunkBytesFor(List<Gradient> layout) {
        long total = 0;
        for (Gradient g : layout) {
            total += g.byteSize();
        }
        long perWorker = (total / options.threads() + 63) & ~63L;
        return Math.min(options.chunkBytes(), Math.max(MIN_CHUNK_BYTES, perWorker));
    }

    /** Sums one chunk across replicas into the result slot, on the calling worker. */
    private void reduce(StagingPlan.Chunk chunk, int slot, MemorySegment[] in, int k) {
        long base = slot * options.chunkBytes();
        double[][] squares = chunkSquares;
        for (StagingPlan.Piece p : chunk.pieces()) {
            for (int r = 0; r < in.length; r++) {
                in[r] = ring.staging[r].segment().asSlice(base + p.slotOffset(), p.bytes());
            }
            MemorySegment out = ring.result.segment().asSlice(base + p.slotOffset(), p.bytes());
            HostAverage.average(p.dtype(), in, out, 0, p.count());
        }
        if (squares != null) { // fused: the chunk just written is still in cache
            squares[k] = cellSquares(chunk, p -> ring.result.segment().asSlice(base + p.slotOffset(), p.bytes()));
        }
    }

    /**
     * A chunk's cells' sums of squares, piece by piece in chunk order and each piece cut into
     * cells from its start ({@link #cellBytes}): the same numbers wherever the average was written.
     */
    private double[] cellSquares(StagingPlan.Chunk chunk, Function<StagingPlan.Piece, MemorySegment> average) {
        long cells = 0;
        for (StagingPlan.Piece p : chunk.pieces()) {
            cells += cellsOf(p);
        }
        double[] sums = new double[Math.toIntExact(cells)];
        int c = 0;
        for (StagingPlan.Piece p : chunk.pieces()) {
            MemorySegment out = average.apply(p);
            long cell = cellBytes() / p.dtype().bytes();
            for (long at = 0; at < p.count(); at += cell) {
                sums[c++] = HostAverage.sumOfSquaresFast(p.dtype(), out.asSlice(at * p.dtype().bytes()), Math.min(cell, p.count() - at));
            }
        }
        return sums;
    }

    @Override
    protected void release() {
        workers.shutdown();
        ring.close(ahead.events());
    }
}
