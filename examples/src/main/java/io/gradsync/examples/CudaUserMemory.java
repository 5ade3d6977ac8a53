package io.gradsync.examples;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * On a GPU: the program's own CUDA memory and stream, made with JCuda in the GPU's primary
 * context as the CUDA runtime makes them, handed to gradsync as addresses; or gradsync's bucket
 * memory, written through its address. Copies go through the program's own pinned memory.
 */
final class CudaUserMemory implements UserMemory {
    private final CudaDevice device;
    private final CUstream stream;
    private final DeviceStream wrapped;
    private final List<CUdeviceptr> own = new ArrayList<>();
    private final List<DeviceBuffer> buffers = new ArrayList<>();
    private Pointer pinned;
    private long pinnedBytes;

    CudaUserMemory(CudaDevice device) {
        this.device = device;
        bindPrimaryContext(device.ordinal());
        this.stream = new CUstream();
        check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        this.wrapped = device.wrapStream(handleOf(stream));
    }

    @Override
    public DeviceStream stream() {
        return wrapped;
    }

    /** The program's own {@code cuMemAlloc}, handed to gradsync by address. */
    @Override
    public Gradient allocate(String name, int count) {
        bindPrimaryContext(device.ordinal());
        CUdeviceptr p = new CUdeviceptr();
        check(cuMemAlloc(p, (long) count * Float.BYTES), "cuMemAlloc");
        own.add(p);
        DeviceBuffer b = device.wrap(addressOf(p), (long) count * Float.BYTES);
        buffers.add(b);
        return Gradient.of(name, b, DType.FP32);
    }

    private static void bindPrimaryContext(int ordinal) {
        CUdevice dev = new CUdevice();
        check(cuDeviceGet(dev, ordinal), "cuDeviceGet");
        CUcontext ctx = new CUcontext();
        check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
        check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    }

    /** A device pointer's address, through JCuda's public API. */
    private static long addressOf(CUdeviceptr p) {
        long[] value = {0};
        check(cuPointerGetAttribute(Pointer.to(value), CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p),
                "cuPointerGetAttribute");
        return value[0];
    }

    /** JCuda prints a stream's handle ({@code CUstream[nativePointer=0x...]}) but has no public getter for it. */
    private static long handleOf(CUstream s) {
        String text = s.toString();
        return Long.parseUnsignedLong(text.substring(text.indexOf("0x") + 2, text.indexOf(']')), 16);
    }

    private static void check(int rc, String call) {
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException(call + ": " + CUresult.stringFor(rc));
        }
    }

    /** The program's pinned staging, grown to {@code bytes}; the stream is idle when this returns. */
    private FloatBuffer staging(long bytes) {
        check(cuStreamSynchronize(stream), "cuStreamSynchronize");
        if (bytes > pinnedBytes) {
            if (pinned != null) {
                cuMemFreeHost(pinned);
            }
            pinned = new Pointer();
            check(cuMemHostAlloc(pinned, bytes, 0), "cuMemHostAlloc");
            pinnedBytes = bytes;
        }
        return pinned.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    /** Any gradient's memory by its address: the program's own, or gradsync's bucket memory. */
    private static CUdeviceptr at(Gradient g) {
        return new CUdeviceptr().withByteOffset(g.address());
    }

    @Override
    public void write(Gradient g, float[] values) {
        staging(g.byteSize()).put(values);
        check(cuMemcpyHtoDAsync(at(g), pinned, g.byteSize(), stream), "cuMemcpyHtoDAsync");
    }

    @Override
    public void read(Gradient g, float[] out) {
        FloatBuffer host = staging(g.byteSize());
        check(cuMemcpyDtoHAsync(pinned, at(g), g.byteSize(), stream), "cuMemcpyDtoHAsync");
        check(cuStreamSynchronize(stream), "cuStreamSynchronize");
        host.get(out);
    }

    @Override
    public void close() {
        cuStreamSynchronize(stream);
        wrapped.close(); // forgets the handle; the stream is ours to destroy
        cuStreamDestroy(stream);
        if (pinned != null) {
            cuMemFreeHost(pinned);
        }
        buffers.forEach(DeviceBuffer::close); // lets go of them; the memory is ours to free
        own.forEach(p -> cuMemFree(p));
    }
}
