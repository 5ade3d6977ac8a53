package io.gradsync.sync.backend.nccl;

import io.gradsync.nccl.NcclComm;
import io.gradsync.nccl.NcclDataType;
import io.gradsync.nccl.NcclRedOp;
import io.gradsync.sync.Shards;
import io.gradsync.sync.backend.Collective;
import java.util.ArrayList;
import java.util.List;

/**
 * The NCCL calls one collective makes on a replica set, all in place, built from {@link NcclPlan}'s
 * runs of gradients:
 * <ul>
 * <li>the average: {@code ncclAllReduce} with {@code ncclAvg} per run (merged runs where the ranks
 * agree on them);</li>
 * <li>a broadcast: {@code ncclBroadcast} from the root per run; a broadcast is not cut by shards, so
 * merged runs serve it too;</li>
 * <li>reduce-scatter and all-gather: per gradient, since shards ({@link Shards#range}) are per
 * gradient. Where the gradient's count divides by the world size, NCCL's own in-place forms:
 * {@code ncclReduceScatter(base, base + g * s, s, ncclAvg)} and
 * {@code ncclAllGather(base + g * s, base, s)} for replica {@code g} and shard size {@code s}.
 * Otherwise one call per non-empty shard {@code h}, grouped: {@code ncclReduce} with {@code ncclAvg}
 * to root {@code h}, which writes the root's buffer only (nccl.h: the receive buffer may be NULL on
 * the other ranks), and {@code ncclBroadcast} from root {@code h}.</li>
 * </ul>
 * Roots are NCCL ranks, which are the global replica indices: in one process comm {@code r} of
 * {@code ncclCommInitAll} is rank {@code r}; with one process per GPU a process's rank is its NCCL rank.
 *
 * <p>Thread-safety: immutable.
 */
final class NcclCalls {
    /** The NCCL function of a call. */
    enum Op {
        ALL_REDUCE, BROADCAST, REDUCE, REDUCE_SCATTER, ALL_GATHER
    }

    /**
     * One NCCL call on every local replica.
     *
     * @param count elements NCCL is told: per rank for {@link Op#REDUCE_SCATTER} and {@link Op#ALL_GATHER}
     * @param root  the NCCL rank of {@link Op#BROADCAST} and {@link Op#REDUCE}; -1 for the others
     * @param send  per local replica, the send buffer's address
     * @param recv  per local replica, the receive buffer's address
     */
    record Call(Op op, long count, NcclDataType type, int root, long[] send, long[] recv) {
        /** Enqueues local replica {@code r}'s part on {@code comm}. */
        void enqueue(NcclComm comm, int r, long stream) {
            switch (op) {
                case ALL_REDUCE -> comm.allReduce(send[r], recv[r], count, type, NcclRedOp.AVG, stream);
                case BROADCAST -> comm.broadcast(send[r], recv[r], count, type, root, stream);
                case REDUCE -> comm.reduce(send[r], recv[r], count, type, NcclRedOp.AVG, root, stream);
                case REDUCE_SCATTER -> comm.reduceScatter(send[r], recv[r], count, type, NcclRedOp.AVG, stream);
                case ALL_GATHER -> comm.allGather(send[r], recv[r], count, type, stream);
            }
        }
    }

    final Collective collective;
    final List<Call> calls;
    /** What failure messages name, made once: the hot path only passes it along. */
    final String description;
    final String checkDescription;

    private NcclCalls(Collective collective, List<Call> calls, String description) {
        this.collective = collective;
        this.calls = List.copyOf(calls);
        this.description = description;
        this.checkDescription = "the layout check before " + description;
    }

    /**
     * @param merged    whether the plan's merged runs may be used (the ranks agreed on them); the
     *                  sharded collectives go gradient by gradient regardless
     * @param firstRank the global index of local replica 0
     * @param worldSize replicas over all processes
     */
    static NcclCalls of(NcclPlan p, Collective collective, boolean merged, int firstRank, int worldSize) {
        NcclPlan.Calls runs = merged && !collective.sharded() ? p.merged : p.each;
        List<Call> out = new ArrayList<>();
        for (int c = 0; c < runs.count().length; c++) {
            long count = runs.count()[c];
            NcclDataType type = runs.type()[c];
            long[] base = new long[runs.address().length];
            for (int r = 0; r < base.length; r++) {
                base[r] = runs.address()[r][c];
            }
            switch (collective.kind()) {
                case ALL_REDUCE -> out.add(new Call(Op.ALL_REDUCE, count, type, -1, base, base));
                case BROADCAST -> out.add(new Call(Op.BROADCAST, count, type, collective.root(), base, base));
                case REDUCE_SCATTER, ALL_GATHER -> shard(out, collective.kind() == Collective.Kind.ALL_GATHER, count,
                        type, base, firstRank, worldSize);
            }
        }
        String label = collective.kind() == Collective.Kind.ALL_REDUCE ? "all-reduce" : collective.label();
        return new NcclCalls(collective, out, p.describe(label, out.size()));
    }

    private static void shard(List<Call> out, boolean gather, long count, NcclDataType type, long[] base, int firstRank,
            int worldSize) {
        long bytes = type.byteSize();
        if (count % worldSize == 0) {
            long s = count / worldSize;
            long[] own = new long[base.length];
            for (int r = 0; r < base.length; r++) {
                own[r] = base[r] + (long) (firstRank + r) * s * bytes;
            }
            out.add(gather ? new Call(Op.ALL_GATHER, s, type, -1, own, base)
                    : new Call(Op.REDUCE_SCATTER, s, type, -1, base, own));
            return;
        }
        // An uneven tail: NCCL's reduce-scatter and all-gather take equal blocks, so each shard goes on its own.
        for (int h = 0; h < worldSize; h++) {
            Shards shard = Shards.range(count, worldSize, h);
            if (shard.count() == 0) {
                break; // the shards past the end are empty
            }
            long[] at = new long[base.length];
            for (int r = 0; r < base.length; r++) {
                at[r] = base[r] + shard.offset() * bytes;
            }
            out.add(new Call(gather ? Op.BROADCAST : Op.REDUCE, shard.count(), type, h, at, at));
        }
    }
}
