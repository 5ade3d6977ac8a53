package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.Shards;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.internal.HostAverage;
import io.gradsync.tasks.jvm.JvmBuffer;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Replicas on JVM devices are host memory already: staging would copy them into host memory and
 * back. Here every chunk is averaged where the replicas are, by the staging workers, into one
 * replica's memory (the average's inputs may include its output), then copied to the others; a
 * reduce-scatter averages each shard into its owner's memory alone, and the copy collectives copy
 * from the owner or the root. The same chunks as staging, so the same work split; the same
 * {@link HostAverage}, so the same bits.
 *
 * <p>Thread-safety: one call at a time (the synchronizer's lock); within it, chunks on several workers
 * write disjoint memory.
 */
final class HostInPlace {
    private HostInPlace() {
    }

    /** True where every gradient lies in a JVM device's memory and no replica names a stream (whose queued work would have to be waited for on the device). */
    static boolean applies(List<Replica> replicas) {
        for (Replica r : replicas) {
            if (r.stream() != null) {
                return false;
            }
            for (Gradient g : r.gradients()) {
                if (!(g.buffer() instanceof JvmBuffer)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** {@code op} on every chunk, on the workers; returns the first failure, or null. */
    static RuntimeException run(List<Replica> replicas, List<StagingPlan.Chunk> chunks, Collective op, StagingWorkers workers) {
        AtomicInteger next = new AtomicInteger();
        return workers.run(chunks.size(), () -> {
            MemorySegment[] in = new MemorySegment[replicas.size()];
            for (int k = next.getAndIncrement(); k < chunks.size() && !workers.failed(); k = next.getAndIncrement()) {
                for (StagingPlan.Piece p : chunks.get(k).pieces()) {
                    piece(replicas, p, op, in);
                }
            }
        });
    }

    private static void piece(List<Replica> replicas, StagingPlan.Piece p, Collective op, MemorySegment[] in) {
        int n = replicas.size();
        long count = replicas.getFirst().gradients().get(p.gradient()).count();
        long from = p.first();
        long to = p.first() + p.count();
        switch (op.kind()) {
            case ALL_REDUCE -> {
                for (int r = 0; r < n; r++) {
                    in[r] = view(replicas, r, p, from, to);
                }
                HostAverage.average(p.dtype(), in, in[0], 0, p.count()); // into replica 0's memory, then to the others
                for (int r = 1; r < n; r++) {
                    in[r].copyFrom(in[0]);
                }
            }
            case REDUCE_SCATTER -> {
                for (int h = 0; h < n; h++) {
                    Shards s = Shards.range(count, n, h);
                    long lo = Math.max(from, s.offset());
                    long hi = Math.min(to, s.end());
                    if (lo < hi) {
                        for (int r = 0; r < n; r++) {
                            in[r] = view(replicas, r, p, lo, hi);
                        }
                        HostAverage.average(p.dtype(), in, in[h], 0, hi - lo); // the owner's shard alone is written
                    }
                }
            }
            case ALL_GATHER -> {
                for (int h = 0; h < n; h++) {
                    Shards s = Shards.range(count, n, h);
                    copyFrom(replicas, h, p, Math.max(from, s.offset()), Math.min(to, s.end()));
                }
            }
            case BROADCAST -> copyFrom(replicas, op.root(), p, from, to);
        }
    }

    /** Elements {@code [lo, hi)} of replica {@code source}'s gradient copied into every other replica's. */
    private static void copyFrom(List<Replica> replicas, int source, StagingPlan.Piece p, long lo, long hi) {
        if (lo >= hi) {
            return;
        }
        MemorySegment src = view(replicas, source, p, lo, hi);
        for (int r = 0; r < replicas.size(); r++) {
            if (r != source) {
                view(replicas, r, p, lo, hi).copyFrom(src);
            }
        }
    }

    /** Elements {@code [lo, hi)} of piece {@code p}'s gradient in replica {@code r}'s memory. */
    private static MemorySegment view(List<Replica> replicas, int r, StagingPlan.Piece p, long lo, long hi) {
        Gradient g = replicas.get(r).gradients().get(p.gradient());
        int size = p.dtype().bytes();
        return ((JvmBuffer) g.buffer()).segment().asSlice(g.byteOffset() + lo * size, (hi - lo) * size);
    }
}
