package io.gradsync.sync;

/**
 * Tuning of the {@code cpu} backend (host staging).
 *
 * @param chunkBytes bytes per replica moved and reduced as one pipeline step
 * @param slots      chunks in flight per replica (the ring of pinned slots)
 * @param threads    threads that sum on the host
 *
 * <p>Thread-safety: immutable (every {@code with...} returns a new record); share it freely.
 */
public record CpuOptions(long chunkBytes, int slots, int threads) {

    public CpuOptions {
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

    /**
     * 2 MiB chunks, 24 slots and up to 24 threads: the best of the sweep on 4 x H200 (see
     * bench/RESULTS.md). More threads only contend for host memory bandwidth and the driver.
     */
    public static CpuOptions defaults() {
        return new CpuOptions(2L << 20, 24, Math.min(24, Runtime.getRuntime().availableProcessors()));
    }

    public CpuOptions withChunkBytes(long bytes) {
        return new CpuOptions(bytes, slots, threads);
    }

    public CpuOptions withSlots(int count) {
        return new CpuOptions(chunkBytes, count, threads);
    }

    public CpuOptions withThreads(int count) {
        return new CpuOptions(chunkBytes, slots, count);
    }
}
