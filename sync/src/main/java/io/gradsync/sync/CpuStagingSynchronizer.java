package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;

/**
 * Host staging: every replica's gradients are copied into pinned host memory, averaged there on
 * all cores, and the average is copied back to every device.
 *
 * <p>The work is cut into chunks that flow through a ring of {@code slots} staging slots, so that
 * for different chunks the device-to-host copies (one stream per device), the host sum and the
 * host-to-device copies (a second stream per device) run at the same time. Slot reuse is ordered
 * by events: a replica slot is refilled only after its chunk was summed; the result slot is
 * overwritten only after every device's upload of it finished. All staging memory, streams and
 * events are made once, at construction.
 */
final class CpuStagingSynchronizer implements GradientSynchronizer {
    /** Below this many elements a thread is not worth waking. */
    private static final long MIN_ELEMENTS_PER_TASK = 1 << 15;

    private final List<Device> devices;
    private final SyncOptions options;
    private final DeviceStream[] down;
    private final DeviceStream[] up;
    private final HostBuffer[] staging;
    private final HostBuffer result;
    private final DeviceEvent[][] downloaded;
    private final DeviceEvent[][] uploaded;
    private final ForkJoinPool reducers;
    private StagingPlan plan;
    private volatile boolean closed;

    CpuStagingSynchronizer(List<? extends Device> devices, SyncOptions options) {
        this.devices = List.copyOf(devices);
        this.options = options;
        int n = this.devices.size();
        long ring = options.chunkBytes() * options.slots();
        down = new DeviceStream[n];
        up = new DeviceStream[n];
        staging = new HostBuffer[n];
        downloaded = new DeviceEvent[n][options.slots()];
        uploaded = new DeviceEvent[n][options.slots()];
        HostBuffer res = null;
        try {
            for (int r = 0; r < n; r++) {
                Device d = this.devices.get(r);
                down[r] = d.createStream();
                up[r] = d.createStream();
                staging[r] = d.allocateHost(ring);
                for (int s = 0; s < options.slots(); s++) {
                    downloaded[r][s] = d.createEvent();
                    uploaded[r][s] = d.createEvent();
                }
            }
            // Allocated through device 0; on CUDA it is portable, so every GPU uploads from it directly.
            res = this.devices.getFirst().allocateHost(ring);
        } catch (RuntimeException e) {
            releaseAll();
            throw e;
        }
        result = res;
        reducers = new ForkJoinPool(options.threads());
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.CPU;
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
        ReplicaCheck.check(replicas, devices);
        int n = devices.size();
        if (n == 1) {
            return; // the average of one replica is itself
        }
        List<Gradient> layout = replicas.getFirst().gradients();
        if (plan == null || !plan.fits(layout)) {
            plan = StagingPlan.of(layout, options.chunkBytes());
        }
        List<StagingPlan.Chunk> chunks = plan.chunks();
        for (Device d : devices) {
            d.synchronize(); // the caller's work on the gradients comes first
        }
        int slots = options.slots();
        for (int k = 0; k < Math.min(slots, chunks.size()); k++) {
            download(replicas, chunks.get(k), k % slots);
        }
        float scale = 1.0f / n;
        for (int k = 0; k < chunks.size(); k++) {
            int slot = k % slots;
            StagingPlan.Chunk chunk = chunks.get(k);
            for (int r = 0; r < n; r++) {
                downloaded[r][slot].synchronize();
                uploaded[r][slot].synchronize();
            }
            reduce(chunk, slot, scale);
            upload(replicas, chunk, slot);
            if (k + slots < chunks.size()) {
                download(replicas, chunks.get(k + slots), slot);
            }
        }
        for (DeviceStream s : up) {
            s.synchronize();
        }
    }

    private void download(List<Replica> replicas, StagingPlan.Chunk chunk, int slot) {
        long base = slot * options.chunkBytes();
        for (int r = 0; r < replicas.size(); r++) {
            List<Gradient> grads = replicas.get(r).gradients();
            for (StagingPlan.Piece p : chunk.pieces()) {
                Gradient g = grads.get(p.gradient());
                down[r].copyToHost(g.buffer(), g.byteOffset() + p.first() * p.dtype().bytes(), staging[r],
                        base + p.slotOffset(), p.bytes());
            }
            down[r].record(downloaded[r][slot]);
        }
    }

    private void upload(List<Replica> replicas, StagingPlan.Chunk chunk, int slot) {
        long base = slot * options.chunkBytes();
        for (int r = 0; r < replicas.size(); r++) {
            List<Gradient> grads = replicas.get(r).gradients();
            for (StagingPlan.Piece p : chunk.pieces()) {
                Gradient g = grads.get(p.gradient());
                up[r].copyFromHost(result, base + p.slotOffset(), g.buffer(),
                        g.byteOffset() + p.first() * p.dtype().bytes(), p.bytes());
            }
            up[r].record(uploaded[r][slot]);
        }
    }

    /** Sums the slot's pieces across replicas into the result slot, split over the reducer threads. */
    private void reduce(StagingPlan.Chunk chunk, int slot, float scale) {
        long base = slot * options.chunkBytes();
        int n = devices.size();
        List<Callable<Void>> tasks = new ArrayList<>();
        for (StagingPlan.Piece p : chunk.pieces()) {
            MemorySegment[] in = new MemorySegment[n];
            for (int r = 0; r < n; r++) {
                in[r] = staging[r].segment().asSlice(base + p.slotOffset(), p.bytes());
            }
            MemorySegment out = result.segment().asSlice(base + p.slotOffset(), p.bytes());
            long parts = Math.max(1, Math.min(options.threads(), p.count() / MIN_ELEMENTS_PER_TASK));
            long step = (p.count() + parts - 1) / parts;
            for (long from = 0; from < p.count(); from += step) {
                long lo = from;
                long hi = Math.min(p.count(), from + step);
                tasks.add(() -> {
                    HostAverage.average(p.dtype(), in, out, lo, hi, scale);
                    return null;
                });
            }
        }
        if (tasks.size() == 1) {
            try {
                tasks.getFirst().call();
            } catch (Exception e) {
                throw new IllegalStateException("host reduction failed", e);
            }
            return;
        }
        try {
            for (Future<Void> f : reducers.invokeAll(tasks)) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during the host reduction", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("host reduction failed", e.getCause());
        }
    }

    @Override
    public void barrier() {
        checkOpen();
        for (Device d : devices) {
            d.synchronize();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("cpu staging synchronizer is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            releaseAll();
        }
    }

    private void releaseAll() {
        if (reducers != null) {
            reducers.shutdown();
        }
        for (DeviceStream s : down) {
            if (s != null) {
                s.synchronize();
                s.close();
            }
        }
        for (DeviceStream s : up) {
            if (s != null) {
                s.synchronize();
                s.close();
            }
        }
        for (DeviceEvent[] row : downloaded) {
            for (DeviceEvent e : row) {
                if (e != null) {
                    e.close();
                }
            }
        }
        for (DeviceEvent[] row : uploaded) {
            for (DeviceEvent e : row) {
                if (e != null) {
                    e.close();
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
