package io.gradsync.sync.verify;

import io.gradsync.sync.DType;
import io.gradsync.sync.Shards;
import java.lang.foreign.MemorySegment;

/**
 * What one gradient of one replica must hold after each collective, as counts of wrong elements:
 * the average within rounding of the float64 average ({@link AverageCheck}); every copy bit for bit.
 * Segments start at the gradient's first element; {@code inputs[q]} is replica {@code q}'s
 * (global index {@code q}) before the call. What the tests assert and the benchmark's {@code #wrong}
 * counts for each collective.
 *
 * <p>Thread-safety: stateless static methods.
 */
public final class CollectiveCheck {
    private CollectiveCheck() {
    }

    /** Replica {@code g} after a reduce-scatter: its shard averaged, everything else its own input. */
    public static long wrongAfterReduceScatter(DType t, MemorySegment[] inputs, MemorySegment got, long count, int g) {
        return wrongAfterReduceScatter(t, t, inputs, got, count, g);
    }

    /** As above for fp32 gradients that crossed on a 16-bit {@code wire} ({@link AverageCheck#countWrong(DType, DType, MemorySegment[], MemorySegment, long)}). */
    public static long wrongAfterReduceScatter(DType t, DType wire, MemorySegment[] inputs, MemorySegment got, long count, int g) {
        Shards own = Shards.range(count, inputs.length, g);
        MemorySegment[] in = new MemorySegment[inputs.length];
        for (int q = 0; q < in.length; q++) {
            in[q] = inputs[q].asSlice(own.offset() * t.bytes());
        }
        long wrong = AverageCheck.countWrong(t, wire, in, got.asSlice(own.offset() * t.bytes()), own.count());
        return wrong + differing(t, inputs[g], got, 0, own.offset()) + differing(t, inputs[g], got, own.end(), count);
    }

    /** Any replica after an all-gather: shard {@code h} of replica {@code h}'s input, for every {@code h}. */
    public static long wrongAfterAllGather(DType t, MemorySegment[] inputs, MemorySegment got, long count) {
        long wrong = 0;
        for (int h = 0; h < inputs.length; h++) {
            Shards shard = Shards.range(count, inputs.length, h);
            wrong += differing(t, inputs[h], got, shard.offset(), shard.end());
        }
        return wrong;
    }

    /** Any replica after a broadcast: the root's input. */
    public static long wrongAfterBroadcast(DType t, MemorySegment[] inputs, MemorySegment got, long count, int root) {
        return differing(t, inputs[root], got, 0, count);
    }

    /** Elements of {@code [from, to)} whose bits differ between {@code want} and {@code got}. */
    public static long differing(DType t, MemorySegment want, MemorySegment got, long from, long to) {
        long wrong = 0;
        long end = to * t.bytes();
        long at = from * t.bytes();
        while (at < end) {
            long m = MemorySegment.mismatch(want, at, end, got, at, end);
            if (m < 0) {
                break;
            }
            long element = (at + m) / t.bytes();
            wrong++;
            at = (element + 1) * t.bytes();
        }
        return wrong;
    }
}
