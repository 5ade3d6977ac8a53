package io.gradsync.bench;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import java.util.List;
import java.util.Locale;

/**
 * The collective a bench row times, with nccl-tests' bus-bandwidth factor: the bytes each link
 * carries per byte of the size in a ring, so that figures compare across device counts and with
 * nccl-tests' own tables. The size is one replica's whole gradient: the all-reduce's buffer, the
 * reduce-scatter's input, the all-gather's output, the broadcast's buffer. A broadcast times the
 * root replica 0.
 */
public enum BenchCollective {
    ALL_REDUCE("all-reduce", "avg"),
    REDUCE_SCATTER("reduce-scatter", "avg"),
    ALL_GATHER("all-gather", "none"),
    BROADCAST("broadcast", "none");

    private final String label;
    private final String redop;

    BenchCollective(String label, String redop) {
        this.label = label;
        this.redop = redop;
    }

    public String label() {
        return label;
    }

    /** Whether it averages, so that fp32 gradients may cross on a 16-bit wire. */
    public boolean sums() {
        return this == ALL_REDUCE || this == REDUCE_SCATTER;
    }

    /** nccl-tests' redop column. */
    public String redop() {
        return redop;
    }

    /** busbw / algbw over {@code n} replicas: 2(n-1)/n for the all-reduce, (n-1)/n for the sharded halves, 1 for the broadcast. */
    public double busFactor(int n) {
        if (n <= 1) {
            return 1;
        }
        return switch (this) {
            case ALL_REDUCE -> 2.0 * (n - 1) / n;
            case REDUCE_SCATTER, ALL_GATHER -> (double) (n - 1) / n;
            case BROADCAST -> 1;
        };
    }

    /** One synchronous call of this collective. */
    public void run(GradientSynchronizer sync, List<Replica> replicas) {
        switch (this) {
            case ALL_REDUCE -> sync.synchronize(replicas);
            case REDUCE_SCATTER -> sync.reduceScatter(replicas);
            case ALL_GATHER -> sync.allGather(replicas);
            case BROADCAST -> sync.broadcast(replicas, 0);
        }
    }

    /** @throws IllegalArgumentException naming the valid labels */
    public static BenchCollective parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        for (BenchCollective c : values()) {
            if (c.label.equals(t) || (c == ALL_REDUCE && (t.equals("average") || t.equals("allreduce")))) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown collective '" + text + "'; valid: all-reduce, reduce-scatter, all-gather, broadcast");
    }
}
