package io.gradsync.tasks.api;

/**
 * The thread coordinates of a kernel written in the KernelContext style: a kernel takes a
 * {@code KernelContext} parameter and asks it which element it works on.
 *
 * <p>On a device the compiler replaces each query with the hardware's thread registers and the
 * parameter is not passed to the device at all. On the JVM a runtime creates one context per
 * worker and moves it over the global index space with {@link #moveTo(int)}; this is the only
 * reason the class is mutable.
 *
 * <p>One dimension only: gradient buffers are flat.
 */
public final class KernelContext {
    private final int globalSize;
    private final int localSize;
    private int globalIdx;

    /**
     * @param globalSize number of threads in the launch
     * @param localSize  threads per work group (block); must divide nothing, only be positive
     */
    public KernelContext(int globalSize, int localSize) {
        if (globalSize <= 0 || localSize <= 0) {
            throw new IllegalArgumentException("globalSize and localSize must be positive: " + globalSize + ", " + localSize);
        }
        this.globalSize = globalSize;
        this.localSize = localSize;
    }

    /** Positions this context on one global thread index (JVM runtime use). */
    public KernelContext moveTo(int globalIdx) {
        if (globalIdx < 0 || globalIdx >= globalSize) {
            throw new IndexOutOfBoundsException("globalIdx " + globalIdx + " outside [0, " + globalSize + ")");
        }
        this.globalIdx = globalIdx;
        return this;
    }

    /** Index of this thread in the whole launch. */
    public int globalIdx() {
        return globalIdx;
    }

    /** Number of threads in the whole launch. */
    public int globalSize() {
        return globalSize;
    }

    /** Index of this thread inside its group (block). */
    public int localIdx() {
        return globalIdx % localSize;
    }

    /** Index of this thread's group (block). */
    public int groupIdx() {
        return globalIdx / localSize;
    }

    /** Threads per group (block). */
    public int localSize() {
        return localSize;
    }
}
