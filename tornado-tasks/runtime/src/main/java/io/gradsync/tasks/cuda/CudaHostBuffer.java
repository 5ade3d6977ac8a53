package io.gradsync.tasks.cuda;

import static jcuda.driver.JCudaDriver.cuMemFreeHost;

import io.gradsync.tasks.cuda.driver.CudaCheck;
import io.gradsync.tasks.device.AbstractHostBuffer;
import java.lang.foreign.MemorySegment;
import jcuda.Pointer;

/**
 * Pinned, portable host memory from {@code cuMemHostAlloc}, seen from Java as a segment.
 *
 * <p>Thread-safety: as {@link io.gradsync.tasks.device.HostBuffer}.
 */
public final class CudaHostBuffer extends AbstractHostBuffer {
    private final CudaDevice owner;
    private final Pointer pointer;

    CudaHostBuffer(CudaDevice owner, Pointer pointer, long bytes) {
        super(segmentOf(pointer, bytes), true);
        this.owner = owner;
        this.pointer = pointer;
    }

    /** JCuda only exposes pinned memory as a ByteBuffer (2 GiB at most); we take its address. */
    @SuppressWarnings("restricted") // the driver's allocation of exactly {@code bytes}, freed only when this buffer closes
    private static MemorySegment segmentOf(Pointer pointer, long bytes) {
        long base = MemorySegment.ofBuffer(pointer.getByteBuffer(0, 1)).address();
        return MemorySegment.ofAddress(base).reinterpret(bytes);
    }

    Pointer pointer(long offset) {
        segment(); // throws when closed
        return offset == 0 ? pointer : pointer.withByteOffset(offset);
    }

    @Override
    protected void free() {
        owner.bind();
        CudaCheck.check(cuMemFreeHost(pointer), "cuMemFreeHost", owner.id());
    }
}
