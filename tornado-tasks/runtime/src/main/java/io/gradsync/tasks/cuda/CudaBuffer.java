package io.gradsync.tasks.cuda;

import static jcuda.driver.JCudaDriver.cuMemFree;

import io.gradsync.tasks.cuda.driver.CudaCheck;
import io.gradsync.tasks.device.AbstractDeviceBuffer;
import jcuda.driver.CUdeviceptr;

/**
 * Device memory of one GPU: from {@code cuMemAlloc} ({@link CudaDevice#allocate}, freed on close),
 * or memory someone else allocated and gradsync only wraps ({@link CudaDevice#wrap}, never freed).
 *
 * <p>Thread-safety: every method may be called from any thread; closing while another thread
 * still queues work on the buffer is the caller's race to avoid.
 */
public final class CudaBuffer extends AbstractDeviceBuffer<CudaDevice> {
    private final long address;
    private final boolean owned;
    private final boolean fromPool;
    /** Null for wrapped memory: JCuda needs its own handle only to free. */
    private final CUdeviceptr allocation;

    CudaBuffer(CudaDevice device, CUdeviceptr allocation, long bytes) {
        super(device, bytes);
        this.allocation = allocation;
        this.address = NativeAddress.of(allocation);
        this.owned = true;
        this.fromPool = false;
    }

    /** Wraps checked foreign memory. */
    CudaBuffer(CudaDevice device, long address, long bytes, boolean fromPool) {
        super(device, bytes);
        this.allocation = null;
        this.address = address;
        this.owned = false;
        this.fromPool = fromPool;
    }

    /** The device pointer plus {@code offset}, for the driver calls of this package. */
    CUdeviceptr pointer(long offset) {
        checkOpen();
        return new CUdeviceptr().withByteOffset(address + offset);
    }

    /** The buffer's device address (a {@code CUdeviceptr} / {@code void*} in C): hand it to any CUDA library. */
    @Override
    public long address() {
        checkOpen();
        return address;
    }

    /** True for memory gradsync allocated (and frees on close); false for memory it only wraps. */
    public boolean isOwned() {
        return owned;
    }

    /**
     * True for wrapped memory of a stream-ordered pool ({@code cudaMallocAsync}): peer GPUs reach
     * it only where the pool grants them access, which peer access between contexts does not.
     */
    public boolean isFromPool() {
        return fromPool;
    }

    @Override
    protected void free() {
        if (owned) {
            device().bind();
            CudaCheck.check(cuMemFree(allocation), "cuMemFree", device().id());
        }
    }

    @Override
    public String toString() {
        return (owned ? "" : "wrapped ") + byteSize() + " bytes at 0x" + Long.toHexString(address) + " on " + device().id();
    }
}
