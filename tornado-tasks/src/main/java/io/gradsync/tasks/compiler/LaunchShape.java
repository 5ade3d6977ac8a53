package io.gradsync.tasks.compiler;

/**
 * A 1-D launch: {@code grid} groups (CUDA blocks, OpenCL work groups) of {@code block} threads.
 * OpenCL's global size is {@link #globalSize()}.
 */
public record LaunchShape(int grid, int block) {
    /** Threads per group used for the built-in kernels: a multiple of the warp, good occupancy. */
    public static final int DEFAULT_BLOCK = 256;

    public LaunchShape {
        if (grid <= 0 || block <= 0) {
            throw new IllegalArgumentException("bad launch shape grid=" + grid + " block=" + block);
        }
    }

    public long globalSize() {
        return (long) grid * block;
    }

    /**
     * The launch for {@code workItems} elements of a kernel of {@code style}: one thread per
     * element, rounded up to whole groups, at most {@code maxThreads} threads when positive (for
     * grid-stride reductions that add one partial per thread). A serial kernel gets one group.
     */
    public static LaunchShape forWork(KernelStyle style, long workItems, int maxThreads) {
        if (style == KernelStyle.SERIAL) {
            return new LaunchShape(1, 32);
        }
        long threads = Math.max(1, workItems);
        if (maxThreads > 0) {
            threads = Math.min(threads, maxThreads);
        }
        long grid = (threads + DEFAULT_BLOCK - 1) / DEFAULT_BLOCK;
        return new LaunchShape((int) Math.min(grid, Integer.MAX_VALUE), DEFAULT_BLOCK);
    }
}
