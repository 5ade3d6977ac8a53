package io.gradsync.tasks.cuda;

import static jcuda.driver.JCudaDriver.cuMemFree;

import io.gradsync.tasks.device.AbstractDeviceBuffer;
import jcuda.driver.CUdeviceptr;

/** Device memory from {@code cuMemAlloc}. */
public final class CudaBuffer extends AbstractDeviceBuffer<CudaDevice> {
    private final CUdeviceptr pointer;

    CudaBuffer(CudaDevice device, CUdeviceptr pointer, long bytes) {
        super(device, bytes);
        this.pointer = pointer;
    }

    /** The device pointer plus {@code offset}; for kernel arguments and copies. */
    public CUdeviceptr pointer(long offset) {
        checkOpen();
        return offset == 0 ? pointer : pointer.withByteOffset(offset);
    }

    /** The raw device address, for native code of our own (NCCL). */
    public long address() {
        return NativeAddress.of(pointer(0));
    }

    @Override
    protected void free() {
        device().bind();
        CudaCheck.check(cuMemFree(pointer), "cuMemFree", device().id());
    }
}
