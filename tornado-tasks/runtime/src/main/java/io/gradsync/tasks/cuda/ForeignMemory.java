package io.gradsync.tasks.cuda;

import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;
import static jcuda.driver.JCudaDriver.cuStreamGetCtx;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUmemorytype;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

/**
 * Checks memory and streams that another library made, through the driver, before gradsync uses
 * them: a wrong pointer handed to a kernel or a copy is a crash or silent corruption, a wrong one
 * caught here is an exception naming what is wrong.
 */
final class ForeignMemory {
    /** {@code CU_STREAM_LEGACY} and {@code CU_STREAM_PER_THREAD}: special handles, not pointers. */
    private static final long LEGACY_STREAM = 0x1;
    private static final long PER_THREAD_STREAM = 0x2;

    private ForeignMemory() {
    }

    /**
     * Checks that {@code [address, address + bytes)} is device memory of {@code device}'s GPU, all
     * inside one allocation, reachable from its primary context. Returns true for stream-ordered
     * pool or virtual-memory-mapped memory (no context of its own), false for {@code cuMemAlloc} memory.
     */
    static boolean checkDeviceRange(CudaDevice device, long address, long bytes) {
        String what = "cuda memory at 0x" + Long.toHexString(address) + " (" + bytes + " bytes) for " + device.id();
        if (address == 0) {
            throw new IllegalArgumentException(what + ": the address is null");
        }
        if (bytes <= 0) {
            throw new IllegalArgumentException(what + ": the size must be positive");
        }
        if (address + bytes < address) {
            throw new IllegalArgumentException(what + ": the range overflows the address space");
        }
        device.bind();
        CUdeviceptr ptr = new CUdeviceptr().withByteOffset(address);
        int rc = cuPointerGetAttribute(Pointer.to(new int[1]), CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalArgumentException(what + ": the CUDA driver does not know this address ("
                    + CUresult.stringFor(rc) + "): host memory from malloc or the Java heap, freed memory, or no pointer at all");
        }
        int type = intAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, what);
        if (intAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_IS_MANAGED, what) != 0) {
            throw new IllegalArgumentException(what + ": is managed (unified) memory; wrap memory from cuMemAlloc, "
                    + "cudaMalloc or cudaMallocAsync instead");
        }
        if (type != CUmemorytype.CU_MEMORYTYPE_DEVICE) {
            throw new IllegalArgumentException(what + ": is " + (type == CUmemorytype.CU_MEMORYTYPE_HOST
                    ? "page-locked host memory" : "memory of type " + CUmemorytype.stringFor(type)) + ", not device memory");
        }
        int ordinal = intAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, what);
        if (ordinal != device.ordinal()) {
            throw new IllegalArgumentException(what + ": belongs to cuda:" + ordinal + ", not to " + device.id());
        }
        long context = longAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT, what);
        long pool = longAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, what);
        if (context != 0 && context != NativeAddress.of(device.context())) {
            throw new IllegalArgumentException(what + ": was allocated in another CUDA context than " + device.id()
                    + "'s primary context (the one the CUDA runtime, PyTorch and cuBLAS use); gradsync's kernels cannot reach it");
        }
        long start = longAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, what);
        long size = longAttribute(ptr, CUpointer_attribute.CU_POINTER_ATTRIBUTE_RANGE_SIZE, what);
        if (address - start > size || bytes > size - (address - start)) {
            throw new IllegalArgumentException(what + ": runs past the end of its allocation [0x" + Long.toHexString(start)
                    + ", +" + size + " bytes) by " + (address - start + bytes - size) + " bytes");
        }
        return context == 0 || pool != 0;
    }

    /**
     * Checks that {@code handle} is a live stream of {@code device}'s primary context. A handle is
     * a pointer to the driver's own record, and the driver reads it without checking: a made-up
     * handle crashes the process inside the driver. So it is first looked up among this process's
     * readable memory mappings; what passes that goes to the driver. A stream destroyed earlier
     * still points into mapped memory and cannot be told apart safely (as freed device memory cannot).
     */
    static CUstream checkStream(CudaDevice device, long handle) {
        String what = "cuda stream 0x" + Long.toHexString(handle) + " for " + device.id();
        if (handle != 0 && handle != LEGACY_STREAM && handle != PER_THREAD_STREAM && !ProcessMemory.isReadable(handle, 64)) {
            throw new IllegalArgumentException(what + ": is not a live CUDA stream (it points to no memory of this process)");
        }
        device.bind();
        CUstream stream = NativeAddress.stream(handle);
        CUcontext ctx = new CUcontext();
        int rc = cuStreamGetCtx(stream, ctx);
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalArgumentException(what + ": is not a live CUDA stream (" + CUresult.stringFor(rc) + ")");
        }
        if (NativeAddress.of(ctx) != NativeAddress.of(device.context())) {
            throw new IllegalArgumentException(what + ": belongs to another context than " + device.id()
                    + "'s primary context (a stream of another GPU?)");
        }
        return stream;
    }

    private static int intAttribute(CUdeviceptr ptr, int attribute, String what) {
        int[] value = {0};
        check(cuPointerGetAttribute(Pointer.to(value), attribute, ptr), attribute, what);
        return value[0];
    }

    private static long longAttribute(CUdeviceptr ptr, int attribute, String what) {
        long[] value = {0};
        check(cuPointerGetAttribute(Pointer.to(value), attribute, ptr), attribute, what);
        return value[0];
    }

    private static void check(int rc, int attribute, String what) {
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalArgumentException(what + ": the driver cannot tell its " + CUpointer_attribute.stringFor(attribute)
                    + " (" + CUresult.stringFor(rc) + ")");
        }
    }
}
