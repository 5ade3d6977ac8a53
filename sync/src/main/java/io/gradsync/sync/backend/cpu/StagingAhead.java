package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncStats;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.LocalSynchronizer.Ahead;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.HostFlag;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The asynchronous call on the caller's streams. It cannot queue copies as sums finish: the
 * caller's next work is queued right after it returns, and a copy queued behind that work's wait
 * in a shared hardware queue would never run. So every chunk's copies are queued at once, in an
 * order that keeps each wait behind what its release needs. Per chunk k and device: a wait for the
 * sum of chunk k - slots (its staging slot is then free), the copies down, an event; then a wait
 * for the sum of chunk k, the copies up, an event. The host flags count summed chunks across calls
 * ({@link #flagBase}), raised by the background sums in chunk order; the ring is the synchronous
 * call's.
 */
final class StagingAhead {
    private final List<? extends Device> devices;
    private final StagingRing ring;
    private final StagingWorkers workers;
    private final SyncStats stats;
    private final int slots;
    /** Per device and chunk, the events after each direction's copies, and the count of chunks the flags have been raised past. */
    private DeviceEvent[][] aheadDown = new DeviceEvent[0][];
    private DeviceEvent[][] aheadUp = new DeviceEvent[0][];
    private int flagBase;

    StagingAhead(List<? extends Device> devices, StagingRing ring, StagingWorkers workers, SyncStats stats) {
        this.devices = devices;
        this.ring = ring;
        this.workers = workers;
        this.stats = stats;
        this.slots = ring.slots;
    }

    /**
     * Queues every chunk's copies now, after {@code awaitCaller}, and returns the background part
     * that sums them with {@code sum}.
     */
    Ahead queue(List<Replica> replicas, List<StagingPlan.Chunk> chunks, Collective op, HostFlag[] flags, Runnable awaitCaller,
            StagingPipeline.ChunkSum sum, long t0) {
        int n = devices.size();
        reserveAheadEvents(chunks.size());
        int base = flagBase;
        flagBase += chunks.size();
        awaitCaller.run();
        int queued = 0;
        RuntimeException failure = null;
        try {
            for (int k = 0; k < chunks.size(); k++) {
                int slot = k % slots;
                for (int r = 0; r < n; r++) {
                    if (k >= slots) {
                        ring.down[r].waitUntil(flags[r], base + k - slots + 1);
                    }
                    ring.copyDown(replicas.get(r).gradients(), chunks.get(k), r, slot, op);
                    ring.down[r].record(aheadDown[r][k]);
                }
                queued = k + 1;
                for (int r = 0; r < n; r++) {
                    ring.up[r].waitUntil(flags[r], base + k + 1);
                    ring.copyUp(replicas.get(r).gradients(), chunks.get(k), r, slot, op);
                    ring.up[r].record(aheadUp[r][k]);
                }
            }
            for (int r = 0; r < n; r++) {
                ring.up[r].record(ring.done[r]);
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        stats.phase("queue ahead", System.nanoTime() - t0);
        int summable = queued;
        RuntimeException queueFailure = failure;
        Runnable background = () -> sumAhead(chunks, summable, base, flags, queueFailure, sum);
        return new Ahead(failure == null && !chunks.isEmpty() ? ring.done : null, background);
    }

    /** The host's part of {@link #queue}: sums the first {@code summable} chunks as their copies arrive. */
    private void sumAhead(List<StagingPlan.Chunk> chunks, int summable, int base, HostFlag[] flags, RuntimeException queueFailure,
            StagingPipeline.ChunkSum sum) {
        long t0 = System.nanoTime();
        boolean[] summed = new boolean[summable];
        int[] prefix = {0};
        AtomicInteger next = new AtomicInteger();
        RuntimeException failure = workers.run(summable, () -> {
            try {
                MemorySegment[] in = new MemorySegment[devices.size()];
                for (int k = next.getAndIncrement(); k < summable && !workers.failed(); k = next.getAndIncrement()) {
                    for (DeviceEvent[] row : aheadDown) {
                        row[k].synchronize();
                    }
                    if (k >= slots) {
                        for (DeviceEvent[] row : aheadUp) {
                            row[k - slots].synchronize(); // the result slot's last copies up are done
                        }
                    }
                    sum.sum(chunks.get(k), k % slots, in, k);
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
            throw ring.settle(failure);
        }
    }

    private static void raiseAll(HostFlag[] flags, int value) {
        for (HostFlag f : flags) {
            f.raise(value);
        }
    }

    /** Per device, one event per chunk for each direction: {@link #queue} records all of a call's at once. */
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
            aheadDown[r] = Arrays.copyOf(aheadDown[r], chunks);
            aheadUp[r] = Arrays.copyOf(aheadUp[r], chunks);
            for (int k = have; k < chunks; k++) {
                aheadDown[r][k] = devices.get(r).createUntimedEvent();
                aheadUp[r][k] = devices.get(r).createUntimedEvent();
            }
        }
    }

    /** The events made so far, for the ring to close after its streams are drained. */
    DeviceEvent[][][] events() {
        return new DeviceEvent[][][] {aheadDown, aheadUp};
    }
}
