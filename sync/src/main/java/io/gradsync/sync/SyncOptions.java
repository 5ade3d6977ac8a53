package io.gradsync.sync;

/**
 * Tuning of the synchronizers.
 *
 * @param chunkBytes host staging: bytes per replica moved and reduced as one pipeline step
 * @param slots      host staging: chunks in flight per replica (the ring of pinned slots)
 * @param threads    host staging: threads that sum on the host
 */
public record SyncOptions(long chunkBytes, int slots, int threads) {

    /**
     * 2 MiB chunks, 24 in flight, up to 24 threads: the best of the sweep on 4 x H200 (see
     * bench/RESULTS.md). More threads only contend for host memory bandwidth and the driver.
     */
    public static SyncOptions defaults() {
        return new SyncOptions(2L << 20, 24, Math.min(24, Runtime.getRuntime().availableProcessors()));
    }

    public SyncOptions {
        if (chunkBytes < 4096 || chunkBytes % 64 != 0) {
            throw new IllegalArgumentException("chunkBytes must be >= 4096 and a multiple of 64, got " + chunkBytes);
        }
        if (slots < 2) {
            throw new IllegalArgumentException("slots must be >= 2 so that copies overlap the sum, got " + slots);
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
    }

    public SyncOptions withChunkBytes(long bytes) {
        return new SyncOptions(bytes, slots, threads);
    }

    public SyncOptions withSlots(int count) {
        return new SyncOptions(chunkBytes, count, threads);
    }

    public SyncOptions withThreads(int count) {
        return new SyncOptions(chunkBytes, slots, count);
    }
}
