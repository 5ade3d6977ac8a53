package io.gradsync.sync.verify;


import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gradsync.sync.DType;
import io.gradsync.sync.Shards;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The GPU tests' checker of the collectives, on the host: right results pass, each wrong element counts. */
class CollectiveCheckTest {
    private static final int N = 3;
    private static final long COUNT = 10; // shards of 4, 4, 2

    private static MemorySegment[] inputs(DType t) {
        MemorySegment[] in = new MemorySegment[N];
        SplittableRandom random = new SplittableRandom(42);
        for (int q = 0; q < N; q++) {
            in[q] = MemorySegment.ofArray(new byte[(int) (COUNT * t.bytes())]);
            RandomGradients.fill(t, in[q], COUNT, random);
        }
        return in;
    }

    private static MemorySegment copy(MemorySegment s) {
        return MemorySegment.ofArray(s.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void reduceScatter() {
        MemorySegment[] in = inputs(DType.FP32);
        for (int g = 0; g < N; g++) {
            MemorySegment got = copy(in[g]);
            Shards own = Shards.range(COUNT, N, g);
            for (long i = own.offset(); i < own.end(); i++) {
                double sum = 0;
                for (MemorySegment q : in) {
                    sum += q.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                }
                got.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) (sum / N));
            }
            assertEquals(0, CollectiveCheck.wrongAfterReduceScatter(DType.FP32, in, got, COUNT, g));
            // the unreduced input on the shard, and one element outside it off by one bit
            assertEquals(own.count(), CollectiveCheck.wrongAfterReduceScatter(DType.FP32, in, in[g], COUNT, g));
            long outside = own.offset() == 0 ? COUNT - 1 : 0;
            got.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, outside, got.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, outside) ^ 1);
            assertEquals(1, CollectiveCheck.wrongAfterReduceScatter(DType.FP32, in, got, COUNT, g));
        }
    }

    @Test
    void allGatherAndBroadcastAreBitForBit() {
        MemorySegment[] in = inputs(DType.BF16);
        MemorySegment gathered = MemorySegment.ofArray(new byte[(int) (COUNT * 2)]);
        for (int h = 0; h < N; h++) {
            Shards s = Shards.range(COUNT, N, h);
            gathered.asSlice(s.offset() * 2, s.count() * 2).copyFrom(in[h].asSlice(s.offset() * 2, s.count() * 2));
        }
        assertEquals(0, CollectiveCheck.wrongAfterAllGather(DType.BF16, in, gathered, COUNT));
        assertEquals(COUNT - Shards.range(COUNT, N, 0).count(),
                CollectiveCheck.wrongAfterAllGather(DType.BF16, in, in[0], COUNT), "replica 0's own values off its shard");
        gathered.set(ValueLayout.JAVA_BYTE, 2 * 9 + 1, (byte) (gathered.get(ValueLayout.JAVA_BYTE, 2 * 9 + 1) ^ 0x40));
        assertEquals(1, CollectiveCheck.wrongAfterAllGather(DType.BF16, in, gathered, COUNT));

        assertEquals(0, CollectiveCheck.wrongAfterBroadcast(DType.BF16, in, copy(in[2]), COUNT, 2));
        assertEquals(COUNT, CollectiveCheck.wrongAfterBroadcast(DType.BF16, in, in[1], COUNT, 2));
    }
}
