package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Shards tile a gradient exactly, in order, by the definition's sizes. */
class ShardsTest {

    @ParameterizedTest
    @CsvSource({"10,4", "8,4", "3,8", "0,3", "1,1", "1000003,7", "5,5"})
    void theShardsTileTheGradientInOrder(long count, int world) {
        long size = (count + world - 1) / world;
        long next = 0;
        for (int g = 0; g < world; g++) {
            Shards s = Shards.range(count, world, g);
            assertEquals(Math.min(count, g * size), s.offset(), "shard " + g + " starts where the last ended or at the end");
            assertEquals(Math.min(count, next), s.offset());
            assertTrue(s.count() <= size, "shard " + g + " holds at most ceil(count / world)");
            next = s.end();
        }
        assertEquals(count, next, "the shards cover every element once");
    }

    @Test
    void theDefinitionsExamples() {
        assertEquals(new Shards(9, 1), Shards.range(10, 4, 3)); // s = 3: [0,3) [3,6) [6,9) [9,10)
        assertEquals(new Shards(3, 0), Shards.range(3, 8, 5)); // past the end: empty
    }

    /** Near the long range's end neither g * s nor the shard's end overflows (they once did, giving a shard past the end). */
    @Test
    void theLargestCountsTileWithoutOverflow() {
        for (long count : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - 1, Long.MAX_VALUE / 2 + 3}) {
            for (int world : new int[] {2, 3, 7, Integer.MAX_VALUE}) {
                long size = count / world + (count % world == 0 ? 0 : 1);
                long next = 0;
                for (int g : new int[] {0, 1, world - 2, world - 1}) {
                    Shards s = Shards.range(count, world, g);
                    long expectedStart = java.math.BigInteger.valueOf(g).multiply(java.math.BigInteger.valueOf(size))
                            .min(java.math.BigInteger.valueOf(count)).longValueExact(); // min(count, g * s), exactly
                    assertEquals(expectedStart, s.offset(), count + " over " + world + ", shard " + g);
                    assertTrue(s.end() >= s.offset() && s.end() <= count, count + " over " + world + ", shard " + g + ": " + s);
                    assertTrue(s.count() <= size);
                    next = s.end();
                }
                assertEquals(count, next, count + " over " + world + ": the last shard ends at the end");
            }
        }
        assertThrows(IllegalArgumentException.class, () -> new Shards(Long.MAX_VALUE, 1));
    }

    @Test
    void badArgumentsAreNamed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Shards.range(-1, 2, 0)).getMessage().contains("count must be >= 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Shards.range(4, 0, 0)).getMessage().contains("worldSize must be >= 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Shards.range(4, 2, 2)).getMessage().contains("replica 2 is not in [0, 2)"));
        assertThrows(IllegalArgumentException.class, () -> new Shards(-1, 0));
    }
}
