package io.gradsync.tasks.api;

import java.lang.foreign.MemorySegment;

/**
 * An off-heap array that a kernel can take as a parameter.
 *
 * <p>Each array is a view of a {@link MemorySegment}: either memory it allocated itself (freed by
 * {@link #close()}) or a segment handed in by someone else, e.g. a device runtime's buffer on the
 * JVM (then {@code close()} frees nothing). Elements are in native byte order with natural
 * alignment, the layout device kernels expect. On a device, each array parameter is passed as a
 * pointer plus its element count, so {@link #getSize()} works inside kernels.
 *
 * <p>Thread-safety: like a Java array, not synchronized: threads may read and write different elements at once; writes to one element from several threads, or a read racing a write, need the caller's ordering.
 */
public sealed interface KernelArray extends AutoCloseable
        permits FloatArray, DoubleArray, IntArray, LongArray, HalfArray, Bfloat16Array {

    /** Number of elements. */
    int getSize();

    /** Bytes per element. */
    int elementBytes();

    /** The memory this array views. */
    MemorySegment segment();

    /** Frees the memory if this array allocated it; a view of foreign memory frees nothing. */
    @Override
    void close();
}
