package io.gradsync.tasks.api;

import java.util.Arrays;

/**
 * The launch of a KernelContext kernel, stated by its caller: how many threads in each of one to
 * three dimensions ({@link KernelContext#globalIdx()} .. {@code globalIdz()} run over
 * {@code [0, size)}), and optionally how many of them form a work group (CUDA block, OpenCL work
 * group), the threads that share group-local arrays and barriers. Exactly the stated number of
 * threads run: where the sizes are not whole groups the runtime launches whole groups and the
 * threads past the end do nothing, which a kernel with a barrier cannot allow (its launch is
 * refused then, naming the sizes).
 *
 * <pre>{@code
 * plan.withGrid("scale", WorkerGrid.of(n));                        // n threads, groups chosen
 * plan.withGrid("tile", WorkerGrid.of(rows, cols).withLocalSize(16, 16));
 * }</pre>
 *
 * <p>Immutable and thread safe.
 */
public final class WorkerGrid {
    /** The most threads one group may have on any supported device (CUDA's limit; OpenCL devices are checked at launch). */
    public static final int MAX_GROUP_THREADS = 1024;

    private final int[] global;
    private final int[] local;

    private WorkerGrid(int[] global, int[] local) {
        this.global = global;
        this.local = local;
    }

    /** A 1-D launch of {@code x} threads. */
    public static WorkerGrid of(int x) {
        return create(new int[] {x});
    }

    /** A 2-D launch of {@code x * y} threads. */
    public static WorkerGrid of(int x, int y) {
        return create(new int[] {x, y});
    }

    /** A 3-D launch of {@code x * y * z} threads. */
    public static WorkerGrid of(int x, int y, int z) {
        return create(new int[] {x, y, z});
    }

    private static WorkerGrid create(int[] global) {
        long total = 1;
        for (int i = 0; i < global.length; i++) {
            if (global[i] <= 0) {
                throw new IllegalArgumentException("grid size in dimension " + i + " must be positive, got " + global[i]);
            }
            total *= global[i];
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("grid of " + total + " threads " + Arrays.toString(global)
                    + ": at most " + Integer.MAX_VALUE + " (thread indices are int)");
        }
        return new WorkerGrid(global, null);
    }

    /**
     * This grid with work groups of the given size, one value per dimension; their product at
     * most {@value #MAX_GROUP_THREADS}.
     */
    public WorkerGrid withLocalSize(int... sizes) {
        if (sizes.length != global.length) {
            throw new IllegalArgumentException("a " + global.length + "-D grid needs " + global.length + " local sizes, got " + sizes.length);
        }
        long product = 1;
        for (int i = 0; i < sizes.length; i++) {
            if (sizes[i] <= 0) {
                throw new IllegalArgumentException("local size in dimension " + i + " must be positive, got " + sizes[i]);
            }
            product *= sizes[i];
        }
        if (product > MAX_GROUP_THREADS) {
            throw new IllegalArgumentException("work group of " + product + " threads " + Arrays.toString(sizes) + ": at most " + MAX_GROUP_THREADS);
        }
        return new WorkerGrid(global, sizes.clone());
    }

    /** 1, 2 or 3. */
    public int dimensions() {
        return global.length;
    }

    /** Threads in dimension {@code d}; 1 past the grid's dimensions. */
    public int globalSize(int d) {
        return d < global.length ? global[d] : 1;
    }

    /** Whether the caller chose the group size. */
    public boolean hasLocalSize() {
        return local != null;
    }

    /**
     * Threads per group in dimension {@code d}: the caller's, or else 256 in one dimension,
     * 16 x 16 in two and 8 x 8 x 4 in three, never more than the grid has; 1 past the grid's dimensions.
     */
    public int localSize(int d) {
        if (d >= global.length) {
            return 1;
        }
        if (local != null) {
            return local[d];
        }
        int[] defaults = switch (global.length) {
            case 1 -> new int[] {256};
            case 2 -> new int[] {16, 16};
            default -> new int[] {8, 8, 4};
        };
        return Math.min(defaults[d], global[d]);
    }

    /** Groups in dimension {@code d}: the global size over the local size, rounded up. */
    public int groupCount(int d) {
        int l = localSize(d);
        return (int) (((long) globalSize(d) + l - 1) / l);
    }

    /** Whether the grid is whole groups in every dimension (then no thread is launched past the end). */
    public boolean isWholeGroups() {
        for (int d = 0; d < 3; d++) {
            if (globalSize(d) % localSize(d) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Threads in the whole grid. */
    public long threads() {
        return (long) globalSize(0) * globalSize(1) * globalSize(2);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WorkerGrid g && Arrays.equals(global, g.global) && Arrays.equals(local, g.local);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(global) * 31 + Arrays.hashCode(local);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("WorkerGrid");
        b.append(Arrays.toString(global));
        b.append(" groups of ");
        for (int d = 0; d < global.length; d++) {
            b.append(d > 0 ? "x" : "").append(localSize(d));
        }
        return b.toString();
    }
}
