package io.gradsync.sync;

/**
 * One replica's shard of a gradient, as sharded training splits it: of {@code count} elements over
 * {@code worldSize} replicas, every shard but the last holds {@code s = ceil(count / worldSize)}
 * elements, shard {@code g} is {@code [g * s, min(count, (g + 1) * s))}, and the shards past the
 * end are empty. {@code g} is the replica's global index: its place in the list in one process,
 * its rank with one process per GPU.
 *
 * @param offset the shard's first element
 * @param count  its number of elements, possibly 0
 *
 * <p>Immutable: safe to share between threads.
 */
public record Shards(long offset, long count) {

    public Shards {
        if (offset < 0 || count < 0 || count > Long.MAX_VALUE - offset) {
            throw new IllegalArgumentException("a shard has a non-negative offset and count whose sum is a long, got offset "
                    + offset + ", count " + count);
        }
    }

    /**
     * Shard {@code g} of {@code count} elements over {@code worldSize} replicas.
     *
     * @throws IllegalArgumentException where {@code count} is negative, {@code worldSize} below 1,
     *                                  or {@code g} outside {@code [0, worldSize)}
     */
    public static Shards range(long count, int worldSize, int g) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0, got " + count);
        }
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
        }
        if (g < 0 || g >= worldSize) {
            throw new IllegalArgumentException("replica " + g + " is not in [0, " + worldSize + ")");
        }
        long size = count / worldSize + (count % worldSize == 0 ? 0 : 1);
        // g * size only where it is at most count, and no start + size: neither overflows near Long.MAX_VALUE
        long start = size == 0 || g > count / size ? count : g * size;
        return new Shards(start, Math.min(size, count - start));
    }

    /** One past the shard's last element. */
    public long end() {
        return offset + count;
    }
}
