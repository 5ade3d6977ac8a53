package io.gradsync.tasks.cuda;

import static io.gradsync.tasks.cuda.driver.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemHostGetDevicePointer;

import io.gradsync.tasks.device.HostFlag;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * A host flag of a GPU: one word of mapped pinned memory that streams wait on with
 * {@code cuStreamWaitValue32} (the GPU polls it) and the host writes with a volatile store.
 */
final class CudaHostFlag implements HostFlag {
    private static final VarHandle WORD = ValueLayout.JAVA_INT.varHandle();

    private final CudaDevice device;
    private final Pointer host;
    private final MemorySegment word;
    private final CUdeviceptr mapped;
    private volatile boolean closed;

    @SuppressWarnings("restricted") // the driver's 64-byte allocation, freed only when this flag closes
    CudaHostFlag(CudaDevice device) {
        this.device = device;
        this.host = new Pointer();
        check(cuMemHostAlloc(host, 64, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE | JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP),
                "cuMemHostAlloc(flag)", device.id());
        this.word = MemorySegment.ofAddress(MemorySegment.ofBuffer(host.getByteBuffer(0, 1)).address()).reinterpret(4);
        WORD.setVolatile(word, 0L, 0);
        this.mapped = new CUdeviceptr();
        check(cuMemHostGetDevicePointer(mapped, host, 0), "cuMemHostGetDevicePointer(flag)", device.id());
    }

    CudaDevice device() {
        return device;
    }

    CUdeviceptr mapped() {
        if (closed) {
            throw new IllegalStateException("host flag of " + device.id() + " is closed");
        }
        return mapped;
    }

    @Override
    public void raise(int value) {
        WORD.setVolatile(word, 0L, value);
    }

    @Override
    public int value() {
        return (int) WORD.getVolatile(word, 0L);
    }

    /** Frees the word; streams must no longer wait on it. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            device.bind();
            check(cuMemFreeHost(host), "cuMemFreeHost(flag)", device.id());
        }
    }
}
