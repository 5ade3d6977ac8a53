package io.gradsync.sync.backend;

import io.gradsync.sync.Shards;

/**
 * What a call does with a replica set: which elements of each replica are read, whether they are
 * summed (the average) or copied (one replica's values), and which elements of each replica are
 * written. Every backend moves data by these rules, so the collectives differ only in them.
 *
 * <p>Shards are those of {@link Shards#range}, per gradient, over the replicas' global indices; a
 * single-process backend's global index is the replica's place in the list.
 *
 * @param kind the collective
 * @param root {@link Kind#BROADCAST}'s source replica; -1 for the others
 *
 * <p>Immutable.
 */
public record Collective(Kind kind, int root) {

    public enum Kind {
        ALL_REDUCE("average"),
        REDUCE_SCATTER("reduce-scatter"),
        ALL_GATHER("all-gather"),
        BROADCAST("broadcast");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    public static final Collective AVERAGE = new Collective(Kind.ALL_REDUCE, -1);
    public static final Collective REDUCE_SCATTER = new Collective(Kind.REDUCE_SCATTER, -1);
    public static final Collective ALL_GATHER = new Collective(Kind.ALL_GATHER, -1);

    public Collective {
        if ((kind == Kind.BROADCAST) != (root >= 0)) {
            throw new IllegalArgumentException(kind.label() + " with root " + root);
        }
    }

    /**
     * The broadcast from global replica {@code root} of {@code worldSize}.
     *
     * @throws IllegalArgumentException naming the root and the world where it is outside it
     */
    public static Collective broadcast(int root, int worldSize) {
        if (root < 0 || root >= worldSize) {
            throw new IllegalArgumentException("broadcast: root " + root + " is not a replica: the replicas are 0.."
                    + (worldSize - 1) + " (global indices: the place in the list in one process, the rank with one process per GPU)");
        }
        return new Collective(Kind.BROADCAST, root);
    }

    /** True where the result is the average of every replica's values; false where it is a copy of one replica's. */
    public boolean sums() {
        return kind == Kind.ALL_REDUCE || kind == Kind.REDUCE_SCATTER;
    }

    /** True where what moves is cut by {@link Shards}. */
    public boolean sharded() {
        return kind == Kind.REDUCE_SCATTER || kind == Kind.ALL_GATHER;
    }

    public String label() {
        return kind == Kind.BROADCAST ? "broadcast from replica " + root : kind.label();
    }

    /** Receives element ranges {@code [from, to)}, never empty. */
    @FunctionalInterface
    public interface Ranges {
        void range(long from, long to);
    }

    /**
     * The parts of elements {@code [from, to)} of a gradient of {@code count} elements whose values
     * replica {@code r} of {@code n} gives to the call.
     */
    public void reads(int r, int n, long count, long from, long to, Ranges out) {
        switch (kind) {
            case ALL_REDUCE, REDUCE_SCATTER -> emit(from, to, out);
            case ALL_GATHER -> {
                Shards own = Shards.range(count, n, r);
                emit(Math.max(from, own.offset()), Math.min(to, own.end()), out);
            }
            case BROADCAST -> {
                if (r == root) {
                    emit(from, to, out);
                }
            }
        }
    }

    /** The parts of elements {@code [from, to)} of a gradient of {@code count} elements that the call writes in replica {@code r} of {@code n}. */
    public void writes(int r, int n, long count, long from, long to, Ranges out) {
        switch (kind) {
            case ALL_REDUCE -> emit(from, to, out);
            case REDUCE_SCATTER -> {
                Shards own = Shards.range(count, n, r);
                emit(Math.max(from, own.offset()), Math.min(to, own.end()), out);
            }
            case ALL_GATHER -> {
                Shards own = Shards.range(count, n, r);
                emit(from, Math.min(to, own.offset()), out);
                emit(Math.max(from, own.end()), to, out);
            }
            case BROADCAST -> {
                if (r != root) {
                    emit(from, to, out);
                }
            }
        }
    }

    private static void emit(long from, long to, Ranges out) {
        if (from < to) {
            out.range(from, to);
        }
    }
}
