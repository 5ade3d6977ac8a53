package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.Shards;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.ReplicaCheck;
import io.gradsync.sync.internal.HostAverage;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.kernels.internal.Lanes;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Replicas on JVM devices are host memory already: staging would copy them into host memory and
 * back. Here every chunk is averaged where the replicas are, by the staging workers, into every
 * replica's memory ({@link HostAverage#averageIntoAll}; a chunk's short fp32 pieces in one call
 * into the SIMD lanes, {@link Views#shortFp32}); a
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

    /**
     * True where every gradient lies in a JVM device's memory. A replica's stream is then a JVM
     * device's, whose queued work the synchronous call waits for on the host first.
     */
    private static boolean applies(List<Replica> replicas) {
        for (Replica r : replicas) {
            for (Gradient g : r.gradients()) {
                if (!(g.buffer() instanceof JvmBuffer)) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * What a call's replicas give this class, kept while they are the objects of the last call (a
     * training loop's are: records of immutable lists, so nothing below can change): whether they
     * {@link #applies apply}, and every gradient's views of its own elements in every replica. A
     * piece then looks nothing up and slices nothing, which is most of what a small tensor costs.
     * One call at a time, as the class.
     */
    static final class Views {
        private Replica[] replicas = new Replica[0];
        private boolean applies;
        /** {@code byGradient[g][r]}: gradient {@code g}'s elements in replica {@code r}'s memory. */
        private MemorySegment[][] byGradient;
        /** The chunks {@link #shortFp32} was made for, and per chunk its short fp32 pieces (null: no lanes, or over 8 replicas). */
        private List<StagingPlan.Chunk> batchedChunks;
        private Pieces[] batches;

        /** Whether the replicas are all host memory here (see the class), for these replicas. */
        boolean applies(List<Replica> now) {
            if (!ReplicaCheck.sameObjects(replicas, now)) {
                applies = HostInPlace.applies(now);
                byGradient = applies ? views(now) : null;
                replicas = now.toArray(Replica[]::new);
                batchedChunks = null;
            }
            return applies;
        }

        /**
         * Per chunk, its pieces of fp32 gradients shorter than the kernels' forms take, for SIMD
         * lanes, made once per chunk list and replicas (a model's many small tensors: one call into
         * the lanes a chunk instead of a dispatch a piece); null where there are no lanes or more
         * than 8 replicas.
         */
        Pieces[] shortFp32(List<StagingPlan.Chunk> chunks) {
            if (chunks != batchedChunks) {
                batchedChunks = chunks;
                batches = replicas.length >= 2 && replicas.length <= 8 && Lanes.available() ? batch(chunks, byGradient) : null;
            }
            return batches;
        }

        private static Pieces[] batch(List<StagingPlan.Chunk> chunks, MemorySegment[][] views) {
            Pieces[] out = new Pieces[chunks.size()];
            for (int k = 0; k < chunks.size(); k++) {
                List<StagingPlan.Piece> small = chunks.get(k).pieces().stream().filter(Views::batched).toList();
                StagingPlan.Piece[] rest = chunks.get(k).pieces().stream().filter(p -> !batched(p)).toArray(StagingPlan.Piece[]::new);
                Pieces b = new Pieces(new MemorySegment[small.size()][], new long[small.size()], new long[small.size()], rest);
                for (int i = 0; i < small.size(); i++) {
                    StagingPlan.Piece p = small.get(i);
                    b.views()[i] = views[p.gradient()];
                    b.from()[i] = p.first();
                    b.to()[i] = p.first() + p.count();
                }
                out[k] = b;
            }
            return out;
        }

        /** Whether piece {@code p} goes in a chunk's batch (the rest run one by one). */
        static boolean batched(StagingPlan.Piece p) {
            return p.dtype() == DType.FP32 && p.count() < HostAverage.FORM_MIN;
        }

        private static MemorySegment[][] views(List<Replica> now) {
            int gradients = now.getFirst().gradients().size();
            MemorySegment[][] v = new MemorySegment[gradients][now.size()];
            for (int r = 0; r < now.size(); r++) {
                List<Gradient> grads = now.get(r).gradients();
                for (int g = 0; g < gradients; g++) {
                    Gradient grad = grads.get(g);
                    v[g][r] = ((JvmBuffer) grad.buffer()).segment().asSlice(grad.byteOffset(), grad.byteSize());
                }
            }
            return v;
        }
    }

    /**
     * {@code op} on every chunk, on the workers, for replicas that {@link Views#applies}; returns
     * the first failure, or null. With {@code squares} (an average only), each chunk's cells'
     * sums of squares of the average go into {@code squares[chunk]}, as {@code cells} cuts its pieces.
     */
    static RuntimeException run(List<Replica> replicas, List<StagingPlan.Chunk> chunks, Collective op, StagingWorkers workers,
            Views cached, double[][] squares, CellSquares cells) {
        if (!cached.applies(replicas)) {
            throw new IllegalStateException("the replicas are not all in JVM devices' memory");
        }
        MemorySegment[][] views = cached.byGradient;
        Pieces[] batches = op.kind() == Collective.Kind.ALL_REDUCE && squares == null ? cached.shortFp32(chunks) : null;
        AtomicInteger next = new AtomicInteger();
        return workers.run(chunks.size(), () -> {
            MemorySegment[] shard = new MemorySegment[replicas.size()]; // a worker's scratch for a reduce-scatter's shards
            for (int k = next.getAndIncrement(); k < chunks.size() && !workers.failed(); k = next.getAndIncrement()) {
                if (batches != null) {
                    Pieces b = batches[k];
                    Lanes.averageFp32Pieces(b.views(), b.from(), b.to());
                    for (StagingPlan.Piece p : b.rest()) {
                        piece(views[p.gradient()], p, op, shard);
                    }
                } else {
                    for (StagingPlan.Piece p : chunks.get(k).pieces()) {
                        piece(views[p.gradient()], p, op, shard);
                    }
                    if (squares != null) { // each piece's average in replica 0, cell by cell
                        squares[k] = cells.of(chunks.get(k), p -> view(views[p.gradient()], 0, p, p.first(), p.first() + p.count()));
                    }
                }
            }
        });
    }

    /** Cuts a chunk's pieces into the fused sum's cells and sums each cell's squares, given where each piece's average is. */
    interface CellSquares {
        double[] of(StagingPlan.Chunk chunk, Function<StagingPlan.Piece, MemorySegment> average);
    }

    /**
     * A chunk's short fp32 pieces: piece {@code i} is elements {@code [from[i], to[i])} of its
     * gradient's views {@code views[i]} (one a replica); and the chunk's other pieces, each averaged
     * on its own.
     */
    record Pieces(MemorySegment[][] views, long[] from, long[] to, StagingPlan.Piece[] rest) {
    }

    /** Piece {@code p} of a gradient whose views in each replica are {@code views}. */
    private static void piece(MemorySegment[] views, StagingPlan.Piece p, Collective op, MemorySegment[] in) {
        int n = views.length;
        long from = p.first();
        long to = p.first() + p.count();
        switch (op.kind()) {
            case ALL_REDUCE -> HostAverage.averageIntoAll(p.dtype(), views, from, to);
            case REDUCE_SCATTER -> {
                long count = views[0].byteSize() / p.dtype().bytes();
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
                long count = views[0].byteSize() / p.dtype().bytes();
                for (int h = 0; h < n; h++) {
                    Shards s = Shards.range(count, n, h);
                    copyFrom(views, h, p, Math.max(from, s.offset()), Math.min(to, s.end()));
                }
            }
            case BROADCAST -> copyFrom(views, op.root(), p, from, to);
        }
    }

    /** Elements {@code [lo, hi)} of replica {@code source}'s gradient copied into every other replica's. */
    private static void copyFrom(MemorySegment[] views, int source, StagingPlan.Piece p, long lo, long hi) {
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
    private static MemorySegment view(MemorySegment[] views, int r, StagingPlan.Piece p, long lo, long hi) {
        int size = p.dtype().bytes();
        return views[r].asSlice(lo * size, (hi - lo) * size);
    }
}
