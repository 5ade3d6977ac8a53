package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncStats;
import io.gradsync.sync.backend.Collective;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The synchronous call's pipeline. Worker threads each take the next chunk, wait for its
 * device-to-host copies (queuing them itself in the first round), sum it, refill the freed slot
 * with the chunk {@code slots} ahead, and queue the host-to-device copies of the result; so copies
 * in both directions and sums of different chunks all run at once, and no barrier stands between
 * chunks. Two host counters per slot say which chunk's copies were queued last, so a worker waits
 * on an event only once the right chunk was recorded in it.
 */
final class StagingPipeline {

    /** Sums chunk {@code k} (in slot {@code slot}) across replicas into the result slot, on the calling worker. */
    interface ChunkSum {
        void sum(StagingPlan.Chunk chunk, int slot, MemorySegment[] in, int k);
    }

    private final StagingRing ring;
    private final StagingWorkers workers;
    private final SyncStats stats;
    private final int slots;
    /** Per slot: the chunk whose device-to-host copies were queued into it last. */
    private final AtomicLongArray downloadQueued;
    /** Per slot: the chunk whose host-to-device copies were queued from its result last. */
    private final AtomicLongArray uploadQueued;

    StagingPipeline(StagingRing ring, StagingWorkers workers, SyncStats stats) {
        this.ring = ring;
        this.workers = workers;
        this.stats = stats;
        this.slots = ring.slots;
        downloadQueued = new AtomicLongArray(slots);
        uploadQueued = new AtomicLongArray(slots);
    }

    /** Runs every chunk through the ring; returns the first failure (every worker has stopped), or null. */
    RuntimeException run(List<Replica> replicas, List<StagingPlan.Chunk> chunks, Collective op, ChunkSum sum) {
        for (int s = 0; s < slots; s++) {
            downloadQueued.set(s, -1);
            uploadQueued.set(s, s - (long) slots); // "chunk s - slots" was the last upload: nothing to wait for
        }
        AtomicInteger next = new AtomicInteger();
        return workers.run(chunks.size(), () -> runChunks(replicas, chunks, op, next, sum));
    }

    /** One worker: take chunks in order until none are left. */
    private void runChunks(List<Replica> replicas, List<StagingPlan.Chunk> chunks, Collective op, AtomicInteger next, ChunkSum sum) {
        int n = replicas.size();
        MemorySegment[] in = new MemorySegment[n];
        long waitDown = 0, waitUp = 0, summing = 0, queue = 0;
        for (int k = next.getAndIncrement(); k < chunks.size(); k = next.getAndIncrement()) {
            int slot = k % slots;
            long t0 = System.nanoTime();
            if (k < slots) {
                download(replicas, chunks.get(k), k, op); // the first round: each worker fills its own slot
            }
            workers.awaitQueued(downloadQueued, slot, k);
            for (int r = 0; r < n; r++) {
                ring.downloaded[r][slot].synchronize();
            }
            long t1 = System.nanoTime();
            workers.awaitQueued(uploadQueued, slot, k - slots);
            for (int r = 0; r < n; r++) {
                ring.uploaded[r][slot].synchronize();
            }
            long t2 = System.nanoTime();
            sum.sum(chunks.get(k), slot, in, k);
            long t3 = System.nanoTime();
            if (k + slots < chunks.size()) {
                download(replicas, chunks.get(k + slots), k + slots, op);
            }
            upload(replicas, chunks.get(k), k, op);
            long t4 = System.nanoTime();
            waitDown += t1 - t0;
            waitUp += t2 - t1;
            summing += t3 - t2;
            queue += t4 - t3;
        }
        stats.phase("workers: wait d2h", waitDown);
        stats.phase("workers: wait h2d", waitUp);
        stats.phase("workers: sum", summing);
        stats.phase("workers: queue copies", queue);
    }

    private void download(List<Replica> replicas, StagingPlan.Chunk chunk, int k, Collective op) {
        int slot = k % slots;
        for (int r = 0; r < replicas.size(); r++) {
            synchronized (ring.down[r]) {
                ring.copyDown(replicas.get(r).gradients(), chunk, r, slot, op);
                ring.down[r].record(ring.downloaded[r][slot]);
            }
        }
        downloadQueued.set(slot, k);
    }

    private void upload(List<Replica> replicas, StagingPlan.Chunk chunk, int k, Collective op) {
        int slot = k % slots;
        for (int r = 0; r < replicas.size(); r++) {
            synchronized (ring.up[r]) {
                ring.copyUp(replicas.get(r).gradients(), chunk, r, slot, op);
                ring.up[r].record(ring.uploaded[r][slot]);
            }
        }
        uploadQueued.set(slot, k);
    }
}
