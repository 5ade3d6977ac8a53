package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.Shards;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.ReplicaCheck;
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

    /**
     * Every replica's gradients as views of their own elements, kept while the call's replicas are
     * the objects of the last call (a training loop's are): a piece then slices nothing, which is
     * most of what a small tensor costs. One call at a time, as the class.
     */
    static final class Views {
        private Replica[] replicas = new Replica[0];
        private MemorySegment[][] views;

        MemorySegment[][] of(List<Replica> now) {
            if (!ReplicaCheck.sameObjects(replicas, now)) {
                MemorySegment[][] v = new MemorySegment[now.size()][];
                for (int r = 0; r < v.length; r++) {
                    List<Gradient> grads = now.get(r).gradients();
                    v[r] = new MemorySegment[grads.size()];
                    for (int g = 0; g < grads.size(); g++) {
                        Gradient grad = grads.get(g);
                        v[r][g] = ((JvmBuffer) grad.buffer()).segment().asSlice(grad.byteOffset(), grad.byteSize());
                    }
                }
                views = v;
                replicas = now.toArray(Replica[]::new);
            }
            return views;
        }
    }

    /** {@code op} on every chunk, on the workers; returns the first failure, or null. */
    static RuntimeException run(List<Replica> replicas, List<StagingPlan.Chunk> chunks, Collective op, StagingWorkers workers,
            Views cached) {
        MemorySegment[][] views = cached.of(replicas);
        AtomicInteger next = new AtomicInteger();
        return workers.run(chunks.size(), () -> {
            MemorySegment[] in = new MemorySegment[replicas.size()];
            for (int k = next.getAndIncrement(); k < chunks.size() && !workers.failed(); k = next.getAndIncrement()) {
                for (StagingPlan.Piece p : chunks.get(k).pieces()) {
                    piece(replicas, views, p, op, in);
                }
            }
        });
    }

    private static void piece(List<Replica> replicas, MemorySegment[][] views, StagingPlan.Piece p, Collective op, MemorySegment[] in) {
        int n = replicas.size();
        long count = replicas.getFirst().gradients().get(p.gradient()).count();
        long from = p.first();
        long to = p.first() + p.count();
        switch (op.kind()) {
            case ALL_REDUCE -> {
                for (int r = 0; r < n; r++) {
                    in[r] = views[r][p.gradient()];
                }
                HostAverage.average(p.dtype(), in, in[0], from, to); // into replica 0's memory, then to the others
                long size = p.dtype().bytes();
                for (int r = 1; r < n; r++) {
                    MemorySegment.copy(in[0], from * size, in[r], from * size, p.count() * size);
                }
            }
            case REDUCE_SCATTER -> {
                for (int h = 0; h < n; h++) {
                    Shards s = Shards.range(count, n, h);
                    long lo = Math.max(from, s.offset());
                    long hi = Math.min(to, s.end());
                    if (lo < hi) {
                        for (int r = 0; r < n; r++) {
                            in[r] = view(views, r, p, lo, hi);
                        }
                        HostAverage.average(p.dtype(), in, in[h], 0, hi - lo); // the owner's shard alone is written
                    }
                }
            }
            case ALL_GATHER -> {
                for (int h = 0; h < n; h++) {
                    Shards s = Shards.range(count, n, h);
                    copyFrom(views, h, p, Math.max(from, s.offset()), Math.min(to, s.end()));
                }
            }
            case BROADCAST -> copyFrom(views, op.root(), p, from, to);
        }
    }

    /** Elements {@code [lo, hi)} of replica {@code source}'s gradient copied into every other replica's. */
    private static void copyFrom(MemorySegment[][] views, int source, StagingPlan.Piece p, long lo, long hi) {
        if (lo >= hi) {
            return;
        }
        MemorySegment src = view(views, source, p, lo, hi);
        for (int r = 0; r < views.length; r++) {
            if (r != source) {
                view(views, r, p, lo, hi).copyFrom(src);
            }
        }
    }

    /** Elements {@code [lo, hi)} of piece {@code p}'s gradient in replica {@code r}'s memory. */
    private static MemorySegment view(MemorySegment[][] views, int r, StagingPlan.Piece p, long lo, long hi) {
        int size = p.dtype().bytes();
        return views[r][p.gradient()].asSlice(lo * size, (hi - lo) * size);
    }
}
