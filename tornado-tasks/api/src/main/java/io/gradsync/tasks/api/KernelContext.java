package io.gradsync.tasks.api;

import io.gradsync.tasks.internal.GroupContexts;
import io.gradsync.tasks.internal.WorkGroup;
import java.util.function.IntFunction;

/**
 * The thread coordinates of a kernel written in the KernelContext style: a kernel takes a
 * {@code KernelContext} parameter and asks it which element it works on, in one to three
 * dimensions ({@code x}, {@code y}, {@code z}) over the {@link WorkerGrid} it is launched with.
 *
 * <p>On a device the compiler replaces each call with the hardware's registers and instructions
 * (PTX / OpenCL C): {@code globalIdx()} is {@code ctaid.x * ntid.x + tid.x} /
 * {@code get_global_id(0)}, {@code localIdx()} {@code tid.x} / {@code get_local_id(0)},
 * {@code groupIdx()} {@code ctaid.x} / {@code get_group_id(0)}, {@code localBarrier()}
 * {@code barrier.sync 0} / {@code barrier(CLK_LOCAL_MEM_FENCE)}, and an
 * {@code allocate*LocalArray(n)} a {@code .shared} / {@code __local} array of the work group
 * ({@code n} a constant). The parameter itself is not passed to the device.
 *
 * <p>On the JVM a runtime creates one context per worker thread and moves it over the grid; a
 * kernel that uses barriers or group-local arrays runs each group's threads at once, so that
 * they can wait for each other and share the arrays.
 *
 * <p>Thread-safety: one context belongs to one thread at a time.
 */
public final class KernelContext {
    // fields, not arrays: on the JVM a kernel reads them once per element, and C2 keeps final
    // fields out of a loop that stores the position, which it cannot do for arrays of one type
    private final int globalX;
    private final int globalY;
    private final int globalZ;
    private final int localX;
    private final int localY;
    private final int localZ;
    private int x;
    private int y;
    private int z;
    private final WorkGroup group;
    private int allocations;

    static {
        GroupContexts.install(KernelContext::new);
    }

    /**
     * A 1-D context: {@code globalSize} threads in groups of {@code localSize}.
     *
     * @param globalSize number of threads in the launch
     * @param localSize  threads per work group; need not divide {@code globalSize}
     */
    public KernelContext(int globalSize, int localSize) {
        this(new int[] {globalSize, 1, 1}, new int[] {localSize, 1, 1}, null);
    }

    /**
     * A context over {@code grid} for a kernel that uses no barrier, warp reduction or group-local
     * array (those need the group's threads to run at once, which a task graph arranges).
     */
    public KernelContext(WorkerGrid grid) {
        this(grid, null);
    }

    /** A context over {@code grid} belonging to {@code group}: the JVM runtime's, through {@code GroupContexts}. */
    private KernelContext(WorkerGrid grid, WorkGroup group) {
        this(new int[] {grid.globalSize(0), grid.globalSize(1), grid.globalSize(2)},
                new int[] {grid.localSize(0), grid.localSize(1), grid.localSize(2)}, group);
    }

    private KernelContext(int[] global, int[] local, WorkGroup group) {
        for (int d = 0; d < 3; d++) {
            if (global[d] <= 0 || local[d] <= 0) {
                throw new IllegalArgumentException("global and local sizes must be positive: " + global[d] + ", " + local[d]);
            }
        }
        this.globalX = global[0];
        this.globalY = global[1];
        this.globalZ = global[2];
        this.localX = local[0];
        this.localY = local[1];
        this.localZ = local[2];
        this.group = group;
    }

    /** Positions this context on one global thread index of a 1-D launch (JVM runtime use). */
    public KernelContext moveTo(int globalIdx) {
        return moveTo(globalIdx, 0, 0);
    }

    /** Positions this context on one thread of the grid (JVM runtime use). */
    public KernelContext moveTo(int x, int y, int z) {
        // once per element on the JVM: no allocation here
        if (x < 0 || x >= globalX || y < 0 || y >= globalY || z < 0 || z >= globalZ) {
            throw new IndexOutOfBoundsException("global index (" + x + ", " + y + ", " + z + ") outside the grid "
                    + globalX + " x " + globalY + " x " + globalZ);
        }
        this.x = x;
        this.y = y;
        this.z = z;
        allocations = 0;
        return this;
    }

    /** Index of this thread in the whole launch, dimension x. */
    public int globalIdx() {
        return x;
    }

    /** Index of this thread in the whole launch, dimension y (0 in a 1-D grid). */
    public int globalIdy() {
        return y;
    }

    /** Index of this thread in the whole launch, dimension z. */
    public int globalIdz() {
        return z;
    }

    /** Index of this thread inside its group, dimension x. */
    public int localIdx() {
        return x % localX;
    }

    public int localIdy() {
        return y % localY;
    }

    public int localIdz() {
        return z % localZ;
    }

    /** Index of this thread's group, dimension x. */
    public int groupIdx() {
        return x / localX;
    }

    public int groupIdy() {
        return y / localY;
    }

    public int groupIdz() {
        return z / localZ;
    }

    /** Number of threads in the whole launch, dimension x: exactly the grid's, never rounded up. */
    public int globalSize() {
        return globalX;
    }

    /** Number of threads in dimension {@code dimension} (0, 1 or 2, a constant in a kernel). */
    public int globalSize(int dimension) {
        return pick(dimension, globalX, globalY, globalZ);
    }

    /** Threads per group, dimension x. */
    public int localSize() {
        return localX;
    }

    public int localSize(int dimension) {
        return pick(dimension, localX, localY, localZ);
    }

    /** Groups in the launch, dimension x. */
    public int groupCount() {
        return groupCount(0);
    }

    public int groupCount(int dimension) {
        return (int) (((long) globalSize(dimension) + localSize(dimension) - 1) / localSize(dimension));
    }

    /** Waits until every thread of the group has arrived; orders group-local memory. */
    public void localBarrier() {
        requireGroup("localBarrier").await();
    }

    /** As {@link #localBarrier()}, and orders global memory too (within the group: there is no grid-wide barrier). */
    public void globalBarrier() {
        requireGroup("globalBarrier").await();
    }

    /**
     * The sum of {@code value} over this thread's warp: the 32 consecutive threads of the group
     * (by linear local index, x fastest) that this one is among, added as a butterfly (the
     * values 16 apart first, then 8, 4, 2, 1), the same bits in every lane and on every device.
     * A {@code shfl.sync} sequence in PTX; through group-local memory in OpenCL C and on the JVM,
     * so every thread of the group must call it, as at a barrier, and groups must be whole warps.
     */
    public float warpSum(float value) {
        return Float.intBitsToFloat(warp(Float.floatToRawIntBits(value), true, false));
    }

    /** As {@link #warpSum(float)}, for int (wrapping). */
    public int warpSum(int value) {
        return warp(value, false, false);
    }

    /** As {@link #warpSum(float)}, Java's {@link Math#max(float, float)} instead of the sum. */
    public float warpMax(float value) {
        return Float.intBitsToFloat(warp(Float.floatToRawIntBits(value), true, true));
    }

    /** As {@link #warpMax(float)}, for int. */
    public int warpMax(int value) {
        return warp(value, false, true);
    }

    private int warp(int bits, boolean isFloat, boolean max) {
        WorkGroup g = requireGroup("a warp reduction");
        int lane = localIdx() + localX * (localIdy() + localY * localIdz());
        int[] values = g.warpValues(localX * localY * localZ);
        values[lane] = bits;
        g.await();
        int base = lane & ~31;
        int[] p = new int[32];
        System.arraycopy(values, base, p, 0, 32);
        for (int off = 16; off > 0; off >>= 1) {
            for (int j = 0; j < off; j++) {
                if (isFloat) {
                    float a = Float.intBitsToFloat(p[j]);
                    float b = Float.intBitsToFloat(p[j + off]);
                    p[j] = Float.floatToRawIntBits(max ? Math.max(a, b) : a + b);
                } else {
                    p[j] = max ? Math.max(p[j], p[j + off]) : p[j] + p[j + off];
                }
            }
        }
        g.await();
        return p[0];
    }

    /** A float array shared by the threads of this group; {@code length} must be a constant in a kernel. */
    public float[] allocateFloatLocalArray(int length) {
        return (float[]) shared(float[]::new, length);
    }

    public int[] allocateIntLocalArray(int length) {
        return (int[]) shared(int[]::new, length);
    }

    public long[] allocateLongLocalArray(int length) {
        return (long[]) shared(long[]::new, length);
    }

    public double[] allocateDoubleLocalArray(int length) {
        return (double[]) shared(double[]::new, length);
    }

    private Object shared(IntFunction<Object> make, int length) {
        if (length < 0) {
            throw new NegativeArraySizeException("group-local array of " + length);
        }
        return requireGroup("a group-local array").array(allocations++, make, length);
    }

    private static int pick(int dimension, int x, int y, int z) {
        return switch (dimension) {
            case 0 -> x;
            case 1 -> y;
            case 2 -> z;
            default -> throw new ArrayIndexOutOfBoundsException("dimension " + dimension + " of a 3-D grid (0, 1 or 2)");
        };
    }

    private WorkGroup requireGroup(String what) {
        if (group == null) {
            throw new IllegalStateException(what + " needs the kernel to run by work groups; "
                    + "run it through a task graph, which does so for kernels that use one");
        }
        return group;
    }
}
