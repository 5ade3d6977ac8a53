package io.gradsync.tasks.cuda;

import static jcuda.driver.JCudaDriver.cuMemFree;

import io.gradsync.tasks.device.DeviceBuffer;
import jcuda.driver.CUdeviceptr;

/** Device memory from {@code cuMemAlloc}. */
public final class CudaBuffer implements DeviceBuffer {
    private final CudaDevice device;
    private final CUdeviceptr pointer;
    private final long bytes;
    private volatile boolean closed;

    CudaBuffer(CudaDevice device, CUdeviceptr pointer, long bytes) {
        this.device = device;
        this.pointer = pointer;
        this.bytes = bytes;
    }

    @Override
    public CudaDevice device() {
        return device;
    }

    @Override
    public long byteSize() {
        return bytes;
    }

    /** The device pointer plus {@code offset}; for kernel arguments and copies. */
    public CUdeviceptr pointer(long offset) {
        if (closed) {
            throw new IllegalStateException("buffer on " + device.id() + " is closed");
        }
        return offset == 0 ? pointer : pointer.withByteOffset(offset);
    }

    /** The raw device address, for native code of our own (NCCL). */
    public long address() {
        return NativeAddress.of(pointer(0));
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            device.bind();
            CudaCheck.check(cuMemFree(pointer), "cuMemFree", device.id());
        }
    }
}
