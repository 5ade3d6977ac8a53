package io.gradsync.tasks.cuda;

import static io.gradsync.tasks.cuda.driver.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuCtxEnablePeerAccess;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceCanAccessPeer;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuDeviceTotalMem;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;

import io.gradsync.tasks.cuda.driver.CudaHandles;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * One GPU and its primary context. Every driver call first makes that context current on the
 * calling thread, so a device may be used from any thread. A <em>logical</em> device
 * ({@link #logical}) is a second handle on the same GPU and context, id {@code cuda:N#L}, whose
 * buffers, streams and modules are its own: several stand in for several GPUs where there are
 * fewer, so an N-GPU schedule can run on the GPUs at hand.
 */
public final class CudaDevice implements Device {
    private final int ordinal;
    private final CUdevice handle;
    private final CUcontext context;
    private final String name;
    private final long memoryBytes;
    private final int ccMajor;
    private final int ccMinor;
    /** Peer access is a property of the context, so logical devices share their GPU's set. */
    private final Set<Integer> peersEnabled;
    /** -1 for the discovered device, else the index given to {@link #logical}. */
    private final int logical;
    /** Built once: every driver call names its device, failing or not. */
    private final String id;
    /** The discovered device of this GPU: this, or the one a logical device was made from. */
    private final CudaDevice gpu;
    private volatile boolean closed;

    static {
        CudaHandles.install(new CudaHandles.Access() {
            @Override
            public void bind(CudaDevice device) {
                device.bind();
            }

            @Override
            public jcuda.driver.CUstream stream(CudaStream stream) {
                return stream.handle();
            }

            @Override
            public int onStream(CudaStream stream, java.util.function.ToIntFunction<jcuda.driver.CUstream> call) {
                return stream.enqueue(call);
            }

            @Override
            public void waitForExternal(CudaStream stream, io.gradsync.tasks.device.DeviceEvent event) {
                stream.waitForExternal(event);
            }
        });
    }

    CudaDevice(int ordinal) {
        this.ordinal = ordinal;
        this.logical = -1;
        this.gpu = this;
        this.peersEnabled = ConcurrentHashMap.newKeySet();
        this.handle = new CUdevice();
        this.context = new CUcontext();
        this.id = "cuda:" + ordinal;
        check(cuDeviceGet(handle, ordinal), "cuDeviceGet", id);
        byte[] raw = new byte[256];
        check(cuDeviceGetName(raw, raw.length, handle), "cuDeviceGetName", id);
        int len = 0;
        while (len < raw.length && raw[len] != 0) {
            len++;
        }
        this.name = new String(raw, 0, len, StandardCharsets.UTF_8);
        long[] mem = {0};
        check(cuDeviceTotalMem(mem, handle), "cuDeviceTotalMem", id);
        this.memoryBytes = mem[0];
        this.ccMajor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        this.ccMinor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        check(cuDevicePrimaryCtxRetain(context, handle), "cuDevicePrimaryCtxRetain", id);
    }

    private CudaDevice(CudaDevice gpu, int logical) {
        this.ordinal = gpu.ordinal;
        this.logical = logical;
        this.gpu = gpu.gpu;
        this.handle = gpu.handle;
        this.context = gpu.context;
        this.name = gpu.name;
        this.memoryBytes = gpu.memoryBytes;
        this.ccMajor = gpu.ccMajor;
        this.ccMinor = gpu.ccMinor;
        this.peersEnabled = gpu.peersEnabled;
        this.id = "cuda:" + ordinal + "#" + logical;
    }

    /** A new logical device on this GPU, with the index {@code index} in its id ({@code cuda:0#3}). */
    public CudaDevice logical(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("logical device index must be >= 0, got " + index);
        }
        return new CudaDevice(this, index);
    }

    /** True for a handle made by {@link #logical}. */
    public boolean isLogical() {
        return logical >= 0;
    }

    /** The discovered device of this GPU (itself unless this is a logical device): what is loaded per GPU is loaded there. */
    public CudaDevice gpu() {
        return gpu;
    }

    /** Whether {@code other} is this GPU, through the same or another handle. */
    public boolean sameGpu(CudaDevice other) {
        return context == other.context;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public DeviceRuntime runtime() {
        return DeviceRuntime.CUDA;
    }

    @Override
    public int ordinal() {
        return ordinal;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long memoryBytes() {
        return memoryBytes;
    }

    @Override
    public String capability() {
        return ccMajor + "." + ccMinor;
    }

    /** {@code 90} for compute capability 9.0: what PTX's {@code .target sm_90} wants. */
    public int smVersion() {
        return ccMajor * 10 + ccMinor;
    }

    public int attribute(int attribute) {
        int[] value = {0};
        check(cuDeviceGetAttribute(value, attribute, handle), "cuDeviceGetAttribute(" + attribute + ")", id());
        return value[0];
    }

    /** Makes this GPU's primary context current on the calling thread. */
    void bind() {
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent", id());
    }

    CUcontext context() {
        return context;
    }

    @Override
    public CudaBuffer allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, got " + bytes);
        }
        checkOpen();
        bind();
        CUdeviceptr ptr = new CUdeviceptr();
        check(cuMemAlloc(ptr, bytes), "cuMemAlloc(" + bytes + " bytes)", id());
        return new CudaBuffer(this, ptr, bytes);
    }

    /** Pinned and portable: every GPU's copy engines read and write it directly. */
    @Override
    public CudaHostBuffer allocateHost(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, got " + bytes);
        }
        bind();
        Pointer host = new Pointer();
        check(cuMemHostAlloc(host, bytes, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE),
                "cuMemHostAlloc(" + bytes + " bytes)", id());
        return new CudaHostBuffer(this, host, bytes);
    }

    /**
     * Wraps {@code bytes} of device memory at {@code address} that another library allocated
     * ({@code cuMemAlloc}, {@code cudaMalloc}, {@code cudaMallocAsync}; PyTorch, cuBLAS, JCuda), so
     * that gradients in it can be averaged in place. gradsync never frees it; closing the buffer
     * only lets go of it. The range is checked through the driver's pointer attributes first.
     *
     * <p>gradsync cannot tell when the owner frees the memory: a buffer whose memory was freed
     * (or freed and reused) must not be passed to gradsync again; the driver then reports an
     * illegal address, or another allocation is overwritten.
     *
     * @throws IllegalArgumentException when the range is not device memory of this GPU in its
     *         primary context, runs past its allocation, or the driver does not know the address
     */
    @Override
    public CudaBuffer wrap(long address, long bytes) {
        checkOpen();
        boolean fromPool = ForeignMemory.checkDeviceRange(this, address, bytes);
        return new CudaBuffer(this, address, bytes, fromPool);
    }

    /**
     * Wraps a CUDA stream another library made ({@code CUstream} / {@code cudaStream_t} as a
     * {@code long}; {@code 0} is the legacy default stream), so that gradsync's work can be ordered
     * after the gradients it produces. Never destroyed by gradsync.
     *
     * @throws IllegalArgumentException when the driver does not know it as a live stream of this GPU's primary context
     */
    public CudaStream wrapStream(long handle) {
        checkOpen();
        return new CudaStream(this, ForeignMemory.checkStream(this, handle));
    }

    @Override
    public CudaStream createStream() {
        checkOpen();
        bind();
        return new CudaStream(this);
    }

    /** Mapped pinned memory that streams poll with {@code cuStreamWaitValue32}. */
    @Override
    public io.gradsync.tasks.device.HostFlag createHostFlag() {
        checkOpen();
        bind();
        return new CudaHostFlag(this);
    }

    @Override
    public CudaEvent createEvent() {
        bind();
        return new CudaEvent(this, true);
    }

    /** An event without timing: recorded for less (the GPU writes no timestamp); it cannot be timed. */
    @Override
    public CudaEvent createUntimedEvent() {
        bind();
        return new CudaEvent(this, false);
    }

    @Override
    public void synchronize() {
        bind();
        check(cuCtxSynchronize(), "cuCtxSynchronize", id());
    }

    /** Device memory free now ({@code cuMemGetInfo}), in bytes: what a leak check watches. */
    public long freeMemoryBytes() {
        bind();
        long[] free = {0};
        long[] total = {0};
        check(cuMemGetInfo(free, total), "cuMemGetInfo", id());
        return free[0];
    }

    /** Whether this GPU can read and write {@code peer}'s memory directly (always, for the same GPU). */
    public boolean canAccessPeer(CudaDevice peer) {
        if (sameGpu(peer)) {
            return true;
        }
        int[] can = {0};
        check(cuDeviceCanAccessPeer(can, handle, peer.handle), "cuDeviceCanAccessPeer", id());
        return can[0] != 0;
    }

    /** Lets kernels and copies on this GPU reach {@code peer}'s memory; idempotent. */
    public void enablePeerAccess(CudaDevice peer) {
        if (sameGpu(peer) || peersEnabled.contains(peer.ordinal)) {
            return;
        }
        bind();
        int rc = cuCtxEnablePeerAccess(peer.context, 0);
        if (rc != CUresult.CUDA_SUCCESS && rc != CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
            check(rc, "cuCtxEnablePeerAccess(" + peer.id() + ")", id());
        }
        peersEnabled.add(peer.ordinal);
    }

    /**
     * A logical device is closed for good: later allocations, wraps and streams throw. A discovered
     * device is process-wide (shared by every user of {@link CudaRuntime}) and its primary context
     * lives as long as the process, so closing one does nothing.
     */
    @Override
    public void close() {
        if (isLogical()) {
            closed = true;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(id() + " is closed");
        }
    }

    @Override
    public String toString() {
        return id() + " " + name;
    }
}
