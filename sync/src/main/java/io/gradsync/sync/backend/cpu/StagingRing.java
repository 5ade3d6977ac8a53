package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.CpuOptions;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.backend.Collective;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.device.HostMemory;
import java.util.List;

/**
 * Host staging's transport, made once: per device a stream down and a stream up, a ring of
 * {@code slots} pinned slots and an event per slot and direction, and the ring of results every
 * device uploads from. With one device nothing is allocated (nothing moves).
 */
final class StagingRing {
    final int slots;
    final long chunkBytes;
    final DeviceStream[] down;
    final DeviceStream[] up;
    final HostBuffer[] staging;
    final HostBuffer result;
    final DeviceEvent[][] downloaded;
    final DeviceEvent[][] uploaded;
    /** Per device: recorded after a call's last upload. */
    final DeviceEvent[] done;

    StagingRing(List<? extends Device> devices, CpuOptions options) {
        this.slots = options.slots();
        this.chunkBytes = options.chunkBytes();
        int n = devices.size();
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
        HostBuffer res = null;
        if (n > 1) {
            try {
                for (int r = 0; r < n; r++) {
                    Device d = devices.get(r);
                    down[r] = d.createStream();
                    up[r] = d.createStream();
                    done[r] = d.createUntimedEvent();
                    staging[r] = d.allocateHost(ring);
                    for (int s = 0; s < slots; s++) {
                        downloaded[r][s] = d.createUntimedEvent();
                        uploaded[r][s] = d.createUntimedEvent();
                    }
                }
                // Allocated through device 0; on CUDA it is portable, so every GPU uploads from it directly.
                res = devices.getFirst().allocateHost(ring);
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }
        result = res;
    }

    /** Queues device r's copies of what {@code op} reads of {@code chunk} into its staging slot. */
    void copyDown(List<Gradient> grads, StagingPlan.Chunk chunk, int r, int slot, Collective op) {
        long base = slot * chunkBytes;
        for (StagingPlan.Piece p : chunk.pieces()) {
            Gradient g = grads.get(p.gradient());
            int size = p.dtype().bytes();
            op.reads(r, down.length, g.count(), p.first(), p.first() + p.count(), (from, to) -> down[r].copyToHost(g.buffer(),
                    g.byteOffset() + from * size, staging[r], base + p.slotOffset() + (from - p.first()) * size, (to - from) * size));
        }
    }

    /** Queues the copies of what {@code op} writes of {@code chunk} from its result slot into device r's gradients. */
    void copyUp(List<Gradient> grads, StagingPlan.Chunk chunk, int r, int slot, Collective op) {
        long base = slot * chunkBytes;
        for (StagingPlan.Piece p : chunk.pieces()) {
            Gradient g = grads.get(p.gradient());
            int size = p.dtype().bytes();
            op.writes(r, up.length, g.count(), p.first(), p.first() + p.count(), (from, to) -> up[r].copyFromHost(result,
                    base + p.slotOffset() + (from - p.first()) * size, g.buffer(), g.byteOffset() + from * size, (to - from) * size));
        }
    }

    /**
     * After a failure: waits for this backend's own streams, so that no copy of the call is still
     * running when the caller hears of it, and reports their own failures (sticky on JVM devices)
     * with it rather than in the next call.
     */
    RuntimeException settle(RuntimeException failure) {
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

    /** Drains and closes the streams, then closes the events ({@code more} too: the asynchronous call's) and the memory. */
    void close(DeviceEvent[][]... more) {
        for (DeviceStream[] streams : new DeviceStream[][] {down, up}) {
            for (DeviceStream s : streams) {
                if (s != null) {
                    s.synchronize();
                    s.close();
                }
            }
        }
        closeEvents(downloaded, uploaded, new DeviceEvent[][] {done});
        closeEvents(more);
        for (HostBuffer h : staging) {
            if (h != null) {
                h.close();
            }
        }
        if (result != null) {
            result.close();
        }
    }

    private static void closeEvents(DeviceEvent[][]... events) {
        for (DeviceEvent[][] all : events) {
            for (DeviceEvent[] row : all) {
                for (DeviceEvent e : row) {
                    if (e != null) {
                        e.close();
                    }
                }
            }
        }
    }
}
