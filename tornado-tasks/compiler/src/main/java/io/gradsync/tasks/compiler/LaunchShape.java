package io.gradsync.tasks.compiler;

import io.gradsync.tasks.api.WorkerGrid;

/**
 * A launch: {@code grid x gridY x gridZ} groups (CUDA blocks, OpenCL work groups) of
 * {@code block x blockY x blockZ} threads, of which the first {@code globalX x globalY x globalZ}
 * are the kernel's threads (a KernelContext kernel's {@code globalSize}); the others, launched
 * only to fill the last group, return at once. The 1-D constructor launches whole groups only.
 * OpenCL's global size in x is {@link #globalSize()}.
 */
public record LaunchShape(int grid, int block, int gridY, int blockY, int gridZ, int blockZ, int globalX, int globalY, int globalZ) {
    /** Threads per group used for the built-in kernels: a multiple of the warp, good occupancy. */
    public static final int DEFAULT_BLOCK = 256;

    public LaunchShape {
        if (grid <= 0 || block <= 0 || gridY <= 0 || blockY <= 0 || gridZ <= 0 || blockZ <= 0) {
            throw new IllegalArgumentException("bad launch shape grid=" + grid + "x" + gridY + "x" + gridZ
                    + " block=" + block + "x" + blockY + "x" + blockZ);
        }
        if (globalX <= 0 || globalY <= 0 || globalZ <= 0
                || globalX > (long) grid * block || globalY > (long) gridY * blockY || globalZ > (long) gridZ * blockZ) {
            throw new IllegalArgumentException("threads " + globalX + "x" + globalY + "x" + globalZ + " do not fit the launch of "
                    + grid + "x" + gridY + "x" + gridZ + " groups of " + block + "x" + blockY + "x" + blockZ);
        }
    }

    /** A 1-D launch of {@code grid} whole groups of {@code block} threads. */
    public LaunchShape(int grid, int block) {
        this(grid, block, 1, 1, 1, 1, (int) Math.min(Integer.MAX_VALUE, (long) Math.max(grid, 1) * Math.max(block, 1)), 1, 1);
    }

    /** The launch of a caller's grid: whole groups covering it. */
    public static LaunchShape of(WorkerGrid g) {
        return new LaunchShape(g.groupCount(0), g.localSize(0), g.groupCount(1), g.localSize(1), g.groupCount(2), g.localSize(2),
                g.globalSize(0), g.globalSize(1), g.globalSize(2));
    }

    /** Threads launched in dimension x (whole groups). */
    public long globalSize() {
        return (long) grid * block;
    }

    /** Threads per group. */
    public int groupThreads() {
        return block * blockY * blockZ;
    }

    /** Whether threads past the kernel's own are launched (the last group in some dimension is not full). */
    public boolean isPadded() {
        return globalX != (long) grid * block || globalY != (long) gridY * blockY || globalZ != (long) gridZ * blockZ;
    }

    /** The kernel's grid, as a KernelContext on the JVM sees it. */
    public WorkerGrid workerGrid() {
        return WorkerGrid.of(globalX, globalY, globalZ).withLocalSize(block, blockY, blockZ);
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
