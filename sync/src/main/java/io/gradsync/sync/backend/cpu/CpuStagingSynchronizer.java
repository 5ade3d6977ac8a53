package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.FusedSumOfSquares;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.CpuOptions;
import io.gradsync.sync.backend.LocalSynchronizer;
import io.gradsync.sync.internal.HostAverage;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.device.HostFlag;
import io.gradsync.tasks.device.HostMemory;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Host staging: every replica's gradients are copied into pinned host memory, averaged there on
 * all cores, and the average is copied back to every device.
 *
 * <p>The gradients are cut into chunks that flow through a ring of {@code slots} pinned slots per
 * device. Worker threads each take the next chunk, wait for its device-to-host copies (queuing
 * them itself in the first round), sum it, refill the freed slot with the chunk {@code slots}
 * ahead, and queue the host-to-device copies of the result; so copies in both directions and sums of different chunks all run at once, and
 * no barrier stands between chunks. Two host counters per slot say which chunk's copies were
 * queued last, so a worker waits on an event only once the right chunk was recorded in it. Memory,
 * streams, events and threads are made once, at construction; a call allocates only its plan
 * when the gradient layout changes.
 *
 * <p>The asynchronous call on the caller's streams ({@link #queueAhead}) cannot queue copies as
 * sums finish: the caller's next work is queued right after it returns, and a copy queued behind
 * that work's wait in a shared hardware queue would never run. It queues every chunk's copies at
 * once instead, the slot reuse and the copies back gated on the device by host flags that the
 * background sums raise ({@link #sumAhead}); the ring is the same.
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
    private final int slots;
    private final DeviceStream[] down;
    private final DeviceStream[] up;
    private final HostBuffer[] staging;
    private final HostBuffer result;
    private final DeviceEvent[][] downloaded;
    private final DeviceEvent[][] uploaded;
    /** Per device: recorded after a call's last upload. */
    private final DeviceEvent[] done;
    private final ExecutorService workers;
    /** Per slot: the chunk whose device-to-host copies were queued into it last. */
    private final AtomicLongArray downloadQueued;
    /** Per slot: the chunk whose host-to-device copies were queued from its result last. */
    private final AtomicLongArray uploadQueued;
    private StagingPlan plan;
    /** Set when a worker fails, so that the others stop waiting. */
    private volatile boolean failed;
    /** {@link #queueAhead}'s events, per device and chunk, and the count of chunks its flags have been raised past. */
    private DeviceEvent[][] aheadDown = new DeviceEvent[0][];
    private DeviceEvent[][] aheadUp = new DeviceEvent[0][];
    private int flagBase;

    CpuStagingSynchronizer(List<? extends Device> devices, CpuOptions options, boolean waitForCaller) {
        super(devices, waitForCaller);
        this.options = options;
        this.slots = options.slots();
        int n = this.devices.size();
        long ring = options.chunkBytes() * slots;
        long pinned = n > 1 ? ring * (n + 1) : 0; // a ring per device and the result's
        if (pinned > HostMemory.totalBytes() / 2) {
            throw new IllegalArgumentException("cpu backend: " + n + " devices need " + (pinned >> 20) + " MiB of pinned staging ("
                    + slots + " slots of " + (options.chunkBytes() >> 10) + " KiB per device, and the result's), more than half of this "
                    + "machine's " + (HostMemory.totalBytes() >> 20) + " MiB; use fewer devices, fewer slots or smaller chunks");
        }
        down = new DeviceStream[n];
        up = new DeviceStream[n];
        staging = new HostBuffer[n];
        downloaded = new DeviceEvent[n][slots];
        uploaded = new DeviceEvent[n][slots];
        done = new DeviceEvent[n];
        downloadQueued = new AtomicLongArray(slots);
        uploadQueued = new AtomicLongArray(slots);
        HostBuffer res = null;
        if (n > 1) {
            try {
                for (int r = 0; r < n; r++) {
                    Device d = this.devices.get(r);
                    down[r] = d.createStream();
                    up[r] = d.createStream();
                    done[r] = d.createEvent();
                    staging[r] = d.allocateHost(ring);
                    for (int s = 0; s < slots; s++) {
                        downloaded[r][s] = d.createEvent();
                        uploaded[r][s] = d.createEvent();
                    }
                }
                // Allocated through device 0; on CUDA it is portable, so every GPU uploads from it directly.
                res = this.devices.getFirst().allocateHost(ring);
            } catch (RuntimeException e) {
                release();
                throw e;
            }
        }
        result = res;
        workers = n > 1 && options.threads() > 1 ? Executors.newFixedThreadPool(options.threads() - 1, r -> {
            Thread t = new Thread(r, "gradsync-staging");
            t.setDaemon(true);
            return t;
        }) : null;
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

    /**
     * Per chunk of the current call, the float64 sums of squares of the averaged values of its
     * pieces' cells, piece by piece (null when not collecting). Added up per gradient in order at the
     * end, so the result depends neither on which worker finished first nor on the chunking.
     */
    private volatile double[][] chunkSquares;

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

    @Override
    protected DeviceEvent[] average(List<Replica> replicas) {
        long t0 = System.nanoTime();
        List<Gradient> layout = replicas.getFirst().gradients();
        if (plan == null || !plan.fits(layout)) {
            plan = StagingPlan.of(layout, chunkBytesFor(layout), cellBytes());
        }
        List<StagingPlan.Chunk> chunks = plan.chunks();
        chunkSquares = collect ? new double[chunks.size()][] : null;
        if (chunks.isEmpty()) {
            return null;
        }
        awaitCallerWork(down);
        long t1 = System.nanoTime();
        stats.phase("prepare", t1 - t0);
        for (int s = 0; s < slots; s++) {
            downloadQueued.set(s, -1);
            uploadQueued.set(s, s - (long) slots); // "chunk s - slots" was the last upload: nothing to wait for
        }
        AtomicInteger next = new AtomicInteger();
        RuntimeException failure = onWorkers(chunks.size(), () -> runChunks(replicas, chunks, next));
        long t3 = System.nanoTime();
        stats.phase("pipeline", t3 - t1);
        if (failure != null) {
            throw settle(failure);
        }
        for (int r = 0; r < up.length; r++) {
            up[r].record(done[r]); // after the last uploads; the next call's slots wait on their own events
        }
        return done;
    }

    /**
     * Runs {@code work} on this thread and on as many helpers as the chunks keep busy; returns the
     * first failure (every worker has stopped by then), or null. A failing worker sets
     * {@link #failed}, so that the others stop waiting for chunks that will never come.
     */
    private RuntimeException onWorkers(int chunks, Runnable work) {
        Runnable guarded = () -> {
            try {
                work.run();
            } catch (RuntimeException | Error e) {
                failed = true;
                throw e;
            }
        };
        failed = false;
        int helpers = workers == null ? 0 : Math.max(0, Math.min(options.threads(), Math.min(slots, chunks)) - 1);
        List<Future<?>> running = new ArrayList<>(helpers);
        for (int i = 0; i < helpers; i++) {
            running.add(workers.submit(guarded));
        }
        RuntimeException failure = null;
        try {
            guarded.run();
        } catch (RuntimeException e) {
            failure = e;
        }
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException re ? re
                            : new IllegalStateException("host staging failed", e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted during host staging", e);
            }
        }
        return failure;
    }

    /**
     * After a failure: waits for this backend's own streams, so that no copy of the call is still
     * running when the caller hears of it, and reports their own failures (sticky on JVM devices)
     * with it rather than in the next call.
     */
    private RuntimeException settle(RuntimeException failure) {
        for (DeviceStream[] streams : new DeviceStream[][] {down, up}) {
            for (DeviceStream st : streams) {
                try {
                    st.synchronize();
                } catch (RuntimeException e) {
                    if (e != failure && e.getCause() != failure) {
                        failure.addSuppressed(e);
                    }
                }
            }
        }
        return failure;
    }

    /**
     * The asynchronous call on the caller's streams: every chunk's copies are queued now, in an
     * order that keeps each wait behind what its release needs. Per chunk k and device: a wait for
     * the sum of chunk k - slots (its staging slot is then free), the copies down, an event; then a
     * wait for the sum of chunk k, the copies up, an event. The flags count summed chunks across
     * calls ({@link #flagBase}), raised by the background sums in chunk order.
     */
    @Override
    protected Ahead queueAhead(List<Replica> replicas, HostFlag[] flags) {
        long t0 = System.nanoTime();
        List<Gradient> layout = replicas.getFirst().gradients();
        if (plan == null || !plan.fits(layout)) {
            plan = StagingPlan.of(layout, chunkBytesFor(layout), cellBytes());
        }
        List<StagingPlan.Chunk> chunks = plan.chunks();
        chunkSquares = null;
        int n = devices.size();
        reserveAheadEvents(chunks.size());
        int base = flagBase;
        flagBase += chunks.size();
        awaitCallerWork(down);
        int queued = 0;
        RuntimeException failure = null;
        try {
            for (int k = 0; k < chunks.size(); k++) {
                int slot = k % slots;
                for (int r = 0; r < n; r++) {
                    if (k >= slots) {
                        down[r].waitUntil(flags[r], base + k - slots + 1);
                    }
                    copyDown(replicas.get(r).gradients(), chunks.get(k), r, slot);
                    down[r].record(aheadDown[r][k]);
                }
                queued = k + 1;
                for (int r = 0; r < n; r++) {
                    up[r].waitUntil(flags[r], base + k + 1);
                    copyUp(replicas.get(r).gradients(), chunks.get(k), r, slot);
                    up[r].record(aheadUp[r][k]);
                }
            }
            for (int r = 0; r < n; r++) {
                up[r].record(done[r]);
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        stats.phase("queue ahead", System.nanoTime() - t0);
        int summable = queued;
        RuntimeException queueFailure = failure;
        Runnable background = () -> sumAhead(chunks, summable, base, flags, queueFailure);
        return new Ahead(failure == null && !chunks.isEmpty() ? done : null, background);
    }

    /** The host's part of {@link #queueAhead}: sums the first {@code summable} chunks as their copies arrive. */
    private void sumAhead(List<StagingPlan.Chunk> chunks, int summable, int base, HostFlag[] flags, RuntimeException queueFailure) {
        long t0 = System.nanoTime();
        boolean[] summed = new boolean[summable];
        int[] prefix = {0};
        AtomicInteger next = new AtomicInteger();
        RuntimeException failure = onWorkers(summable, () -> {
            try {
                MemorySegment[] in = new MemorySegment[devices.size()];
                for (int k = next.getAndIncrement(); k < summable && !failed; k = next.getAndIncrement()) {
                    for (DeviceEvent[] row : aheadDown) {
                        row[k].synchronize();
                    }
                    if (k >= slots) {
                        for (DeviceEvent[] row : aheadUp) {
                            row[k - slots].synchronize(); // the result slot's last copies up are done
                        }
                    }
                    reduce(chunks.get(k), k % slots, in, k);
                    synchronized (summed) { // raise the flags to the chunks summed without a gap
                        summed[k] = true;
                        while (prefix[0] < summable && summed[prefix[0]]) {
                            prefix[0]++;
                        }
                        for (HostFlag f : flags) {
                            f.raise(base + prefix[0]);
                        }
                    }
                }
            } catch (RuntimeException | Error e) {
                raiseAll(flags, base + chunks.size()); // no device waits for ever on a sum that will not come
                throw e;
            }
        });
        raiseAll(flags, base + chunks.size());
        stats.phase("pipeline", System.nanoTime() - t0);
        if (failure == null) {
            failure = queueFailure;
        }
        if (failure != null) {
            throw settle(failure);
        }
    }

    private static void raiseAll(HostFlag[] flags, int value) {
        for (HostFlag f : flags) {
            f.raise(value);
        }
    }

    /** Per device, one event per chunk for each direction: {@link #queueAhead} records all of a call's at once. */
    private void reserveAheadEvents(int chunks) {
        int have = aheadDown.length == 0 ? 0 : aheadDown[0].length;
        if (have >= chunks) {
            return;
        }
        int n = devices.size();
        if (aheadDown.length == 0) {
            aheadDown = new DeviceEvent[n][0];
            aheadUp = new DeviceEvent[n][0];
        }
        for (int r = 0; r < n; r++) {
            aheadDown[r] = java.util.Arrays.copyOf(aheadDown[r], chunks);
            aheadUp[r] = java.util.Arrays.copyOf(aheadUp[r], chunks);
            for (int k = have; k < chunks; k++) {
                aheadDown[r][k] = devices.get(r).createEvent();
                aheadUp[r][k] = devices.get(r).createEvent();
            }
        }
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

    /** One worker: take chunks in order until none are left. */
    private void runChunks(List<Replica> replicas, List<StagingPlan.Chunk> chunks, AtomicInteger next) {
        int n = devices.size();
        MemorySegment[] in = new MemorySegment[n];
        long waitDown = 0, waitUp = 0, sum = 0, queue = 0;
        for (int k = next.getAndIncrement(); k < chunks.size(); k = next.getAndIncrement()) {
            int slot = k % slots;
            long t0 = System.nanoTime();
            if (k < slots) {
                download(replicas, chunks.get(k), k); // the first round: each worker fills its own slot
            }
            awaitQueued(downloadQueued, slot, k);
            for (int r = 0; r < n; r++) {
                downloaded[r][slot].synchronize();
            }
            long t1 = System.nanoTime();
            awaitQueued(uploadQueued, slot, k - slots);
            for (int r = 0; r < n; r++) {
                uploaded[r][slot].synchronize();
            }
            long t2 = System.nanoTime();
            reduce(chunks.get(k), slot, in, k);
            long t3 = System.nanoTime();
            if (k + slots < chunks.size()) {
                download(replicas, chunks.get(k + slots), k + slots);
            }
            upload(replicas, chunks.get(k), k);
            long t4 = System.nanoTime();
            waitDown += t1 - t0;
            waitUp += t2 - t1;
            sum += t3 - t2;
            queue += t4 - t3;
        }
        stats.phase("workers: wait d2h", waitDown);
        stats.phase("workers: wait h2d", waitUp);
        stats.phase("workers: sum", sum);
        stats.phase("workers: queue copies", queue);
    }

    /** Spins briefly, then yields, until {@code counters[slot]} says chunk {@code chunk} was queued. */
    private void awaitQueued(AtomicLongArray counters, int slot, long chunk) {
        for (int spins = 0; counters.get(slot) < chunk; spins++) {
            if (failed) {
                throw new IllegalStateException("host staging stopped: another worker failed");
            }
            if (spins < 1000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    private void download(List<Replica> replicas, StagingPlan.Chunk chunk, int k) {
        int slot = k % slots;
        for (int r = 0; r < replicas.size(); r++) {
            synchronized (down[r]) {
                copyDown(replicas.get(r).gradients(), chunk, r, slot);
                down[r].record(downloaded[r][slot]);
            }
        }
        downloadQueued.set(slot, k);
    }

    private void upload(List<Replica> replicas, StagingPlan.Chunk chunk, int k) {
        int slot = k % slots;
        for (int r = 0; r < replicas.size(); r++) {
            synchronized (up[r]) {
                copyUp(replicas.get(r).gradients(), chunk, r, slot);
                up[r].record(uploaded[r][slot]);
            }
        }
        uploadQueued.set(slot, k);
    }

    /** Queues device r's copies of {@code chunk} into its staging slot. */
    private void copyDown(List<Gradient> grads, StagingPlan.Chunk chunk, int r, int slot) {
        long base = slot * options.chunkBytes();
        for (StagingPlan.Piece p : chunk.pieces()) {
            Gradient g = grads.get(p.gradient());
            down[r].copyToHost(g.buffer(), g.byteOffset() + p.first() * p.dtype().bytes(), staging[r], base + p.slotOffset(), p.bytes());
        }
    }

    /** Queues the copies of {@code chunk}'s result slot into device r's gradients. */
    private void copyUp(List<Gradient> grads, StagingPlan.Chunk chunk, int r, int slot) {
        long base = slot * options.chunkBytes();
        for (StagingPlan.Piece p : chunk.pieces()) {
            Gradient g = grads.get(p.gradient());
            up[r].copyFromHost(result, base + p.slotOffset(), g.buffer(), g.byteOffset() + p.first() * p.dtype().bytes(), p.bytes());
        }
    }

    /** Sums one chunk across replicas into the result slot, on the calling worker. */
    private void reduce(StagingPlan.Chunk chunk, int slot, MemorySegment[] in, int k) {
        long base = slot * options.chunkBytes();
        double[][] squares = chunkSquares;
        double[] sums = null;
        if (squares != null) {
            long cells = 0;
            for (StagingPlan.Piece p : chunk.pieces()) {
                cells += cellsOf(p);
            }
            sums = new double[Math.toIntExact(cells)];
        }
        int c = 0;
        for (StagingPlan.Piece p : chunk.pieces()) {
            for (int r = 0; r < in.length; r++) {
                in[r] = staging[r].segment().asSlice(base + p.slotOffset(), p.bytes());
            }
            MemorySegment out = result.segment().asSlice(base + p.slotOffset(), p.bytes());
            HostAverage.average(p.dtype(), in, out, 0, p.count());
            if (sums != null) { // fused: the piece just written is still in cache
                long cell = cellBytes() / p.dtype().bytes();
                for (long at = 0; at < p.count(); at += cell) {
                    sums[c++] = HostAverage.sumOfSquares(p.dtype(), out.asSlice(at * p.dtype().bytes()),
                            Math.min(cell, p.count() - at));
                }
            }
        }
        if (squares != null) {
            squares[k] = sums;
        }
    }

    @Override
    protected void release() {
        if (workers != null) {
            workers.shutdownNow();
        }
        for (DeviceStream[] streams : new DeviceStream[][] {down, up}) {
            for (DeviceStream s : streams) {
                if (s != null) {
                    s.synchronize();
                    s.close();
                }
            }
        }
        for (DeviceEvent[][] events : new DeviceEvent[][][] {downloaded, uploaded, {done}, aheadDown, aheadUp}) {
            for (DeviceEvent[] row : events) {
                for (DeviceEvent e : row) {
                    if (e != null) {
                        e.close();
                    }
                }
            }
        }
        for (HostBuffer h : staging) {
            if (h != null) {
                h.close();
            }
        }
        if (result != null) {
            result.close();
        }
    }
}
