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

    @Test
    void badArgumentsAreNamed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Shards.range(-1, 2, 0)).getMessage().contains("count must be >= 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Shards.range(4, 0, 0)).getMessage().contains("worldSize must be >= 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Shards.range(4, 2, 2)).getMessage().contains("replica 2 is not in [0, 2)"));
        assertThrows(IllegalArgumentException.class, () -> new Shards(-1, 0));
    }
}
