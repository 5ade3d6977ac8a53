package io.gradsync.tasks.opencl;

import static io.gradsync.tasks.opencl.OpenClCheck.check;
import static org.jocl.CL.CL_DEVICE_TYPE;
import static org.jocl.CL.CL_DEVICE_TYPE_GPU;
import static org.jocl.CL.CL_DEVICE_GLOBAL_MEM_SIZE;
import static org.jocl.CL.CL_DEVICE_NAME;
import static org.jocl.CL.CL_DEVICE_VERSION;
import static org.jocl.CL.CL_MEM_READ_WRITE;
import static org.jocl.CL.CL_PROGRAM_BUILD_LOG;
import static org.jocl.CL.clBuildProgram;
import static org.jocl.CL.clCreateBuffer;
import static org.jocl.CL.clCreateProgramWithSource;
import static org.jocl.CL.clGetProgramBuildInfo;
import static org.jocl.CL.clReleaseProgram;
import static org.jocl.CL.clGetDeviceInfo;

import io.gradsync.tasks.opencl.driver.OpenClHandles;
import io.gradsync.tasks.device.AbstractHostBuffer;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceException;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_device_id;
import org.jocl.cl_mem;
import org.jocl.cl_program;

/**
 * One OpenCL device. Its id is {@code opencl:N}, N its index over all platforms. A <em>logical</em>
 * device ({@link OpenClRuntime#logicalDevices}) is a second view of a physical device with its own
 * queues, id {@code opencl:N#L}: several of them stand in for several devices where there is one
 * (PoCL in CI). Buffers of one platform share its context, so any of its devices may copy them.
 *
 * <p>Thread-safety: every method may be called from any thread; queues made and closed by other threads meanwhile are skipped or waited for consistently.
 */
public final class OpenClDevice implements Device {
    private final int ordinal;
    /** -1 for the discovered device, else the index among logical devices. */
    private final int logical;
    private final OpenClPlatform platform;
    private final cl_device_id id;
    private final String name;
    private final String version;
    private final long memoryBytes;
    private final boolean gpu;
    private final boolean correctlyRoundedDivSqrt;
    private final boolean nvidiaGpu;
    private final int computeMajor;
    private final List<OpenClQueue> queues = new CopyOnWriteArrayList<>();

    static {
        OpenClHandles.install(new OpenClHandles.Access() {
            @Override
            public org.jocl.cl_mem memory(OpenClBuffer buffer) {
                return buffer.handle();
            }

            @Override
            public void enqueue(OpenClQueue queue, java.util.function.Consumer<org.jocl.cl_command_queue> call) {
                queue.enqueue(call);
            }

            @Override
            public cl_program buildProgram(OpenClDevice device, String source, String options, String what) {
                return device.buildProgram(source, options, what);
            }
        });
    }

    OpenClDevice(int ordinal, OpenClPlatform platform, cl_device_id id) {
        this(ordinal, platform, id, -1);
    }

    /** A logical view of {@code physical}, with queues of its own. */
    OpenClDevice(OpenClDevice physical, int logical) {
        this(physical.ordinal, physical.platform, physical.id, logical);
    }

    private OpenClDevice(int ordinal, OpenClPlatform platform, cl_device_id id, int logical) {
        this.ordinal = ordinal;
        this.logical = logical;
        this.platform = platform;
        this.id = id;
        this.name = stringInfo(id, CL_DEVICE_NAME);
        this.version = stringInfo(id, CL_DEVICE_VERSION);
        long[] mem = {0};
        clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, Sizeof.cl_ulong, Pointer.to(mem), null);
        this.memoryBytes = mem[0];
        long[] type = {0};
        clGetDeviceInfo(id, CL_DEVICE_TYPE, Sizeof.cl_ulong, Pointer.to(type), null);
        this.gpu = (type[0] & CL_DEVICE_TYPE_GPU) != 0;
        long[] fp = {0};
        clGetDeviceInfo(id, CL.CL_DEVICE_SINGLE_FP_CONFIG, Sizeof.cl_ulong, Pointer.to(fp), null);
        this.correctlyRoundedDivSqrt = (fp[0] & CL.CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
        this.nvidiaGpu = gpu && stringInfo(id, CL.CL_DEVICE_VENDOR).toUpperCase(java.util.Locale.ROOT).contains("NVIDIA");
        this.computeMajor = nvidiaGpu ? nvidiaComputeMajor(id) : 0;
    }

    /** CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV (cl_nv_device_attribute_query), 0 where the query fails. */
    private static int nvidiaComputeMajor(cl_device_id id) {
        int[] major = {0};
        int rc = clGetDeviceInfo(id, 0x4000, Sizeof.cl_uint, Pointer.to(major), null);
        return rc == CL.CL_SUCCESS ? major[0] : 0;
    }

    /** Whether this NVIDIA GPU's inline PTX rounds a double to bf16 in one instruction (compute capability 9.0 and up). */
    public boolean hasPtxBf16() {
        return nvidiaGpu && computeMajor >= 9;
    }

    /** Whether this is an NVIDIA GPU (whose OpenCL C compiler also takes inline PTX). */
    public boolean isNvidiaGpu() {
        return nvidiaGpu;
    }

    /** Whether f32 division and sqrt are correctly rounded here (Java's results). */
    public boolean correctlyRoundedDivideSqrt() {
        return correctlyRoundedDivSqrt;
    }

    /** Whether the platform calls this device a GPU (NVIDIA's do; PoCL's CPU devices do not). */
    public boolean isGpu() {
        return gpu;
    }

    @Override
    public DeviceRuntime runtime() {
        return DeviceRuntime.OPENCL;
    }

    @Override
    public int ordinal() {
        return ordinal;
    }

    @Override
    public String id() {
        return logical < 0 ? Device.super.id() : Device.super.id() + "#" + logical;
    }

    /** A new logical view of this device, with queues of its own and {@code index} in its id ({@code opencl:0#3}). */
    public OpenClDevice logical(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("logical device index must be >= 0, got " + index);
        }
        return new OpenClDevice(this, index);
    }

    /** True for a view made by {@link #logical} or {@link OpenClRuntime#logicalDevices}. */
    public boolean isLogical() {
        return logical >= 0;
    }

    @Override
    public String name() {
        return name;
    }

    public OpenClPlatform platform() {
        return platform;
    }

    @Override
    public long memoryBytes() {
        return memoryBytes;
    }

    /** The device's OpenCL version string, such as {@code OpenCL 3.0 CUDA}. */
    @Override
    public String capability() {
        return version;
    }

    cl_device_id handle() {
        return id;
    }

    @Override
    public OpenClBuffer allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, got " + bytes);
        }
        int[] rc = {0};
        cl_mem mem = clCreateBuffer(platform.context(), CL_MEM_READ_WRITE, bytes, null, rc);
        check(rc[0], "clCreateBuffer(" + bytes + " bytes)", id());
        return new OpenClBuffer(this, mem, bytes);
    }

    /**
     * Host memory the device copies at full speed: a {@code CL_MEM_ALLOC_HOST_PTR} buffer mapped
     * once for its lifetime (NVIDIA's OpenCL backs it with pinned memory and copies from it by DMA;
     * ordinary host memory goes through a bounce buffer at a fraction of the speed). Sizes above
     * what one mapping can return to Java (2 GiB) get ordinary off-heap memory instead.
     */
    @Override
    public HostBuffer allocateHost(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, got " + bytes);
        }
        if (bytes <= Integer.MAX_VALUE) {
            return OpenClMappedBuffer.allocate(this, bytes);
        }
        Arena arena = Arena.ofShared();
        return new AbstractHostBuffer(arena.allocate(bytes, 4096), false) {
            @Override
            protected void free() {
                arena.close();
            }
        };
    }

    /**
     * Compiles OpenCL C {@code source} for this device in its platform's context. A failed build
     * throws with the compiler's log; the caller releases the program it gets.
     *
     * @param what names the program in errors (a kernel name)
     */
    cl_program buildProgram(String source, String options, String what) {
        int[] rc = {0};
        cl_program program = clCreateProgramWithSource(platform.context(), 1, new String[] {source}, null, rc);
        check(rc[0], "clCreateProgramWithSource(" + what + ")", id());
        int built = clBuildProgram(program, 1, new cl_device_id[] {id}, options, null, null);
        if (built != CL.CL_SUCCESS) {
            long[] size = {0};
            clGetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, 0, null, size);
            byte[] log = new byte[(int) size[0]];
            clGetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, log.length, Pointer.to(log), null);
            clReleaseProgram(program);
            throw new DeviceException("clBuildProgram(" + what + ")", id(), built,
                    CL.stringFor_errorCode(built) + "; build log:\n" + cString(log));
        }
        return program;
    }

    @Override
    public OpenClQueue createStream() {
        OpenClQueue queue = new OpenClQueue(this);
        queues.add(queue);
        return queue;
    }

    @Override
    public DeviceEvent createEvent() {
        return new OpenClEvent(this);
    }

    @Override
    public void synchronize() {
        for (OpenClQueue q : queues) {
            q.finishIfOpen(); // another thread may close it meanwhile
        }
    }

    void forget(OpenClQueue queue) {
        queues.remove(queue);
    }

    @Override
    public void close() {
        for (OpenClQueue q : queues) {
            q.close();
        }
    }

    @Override
    public String toString() {
        return id() + " " + name;
    }

    static String stringInfo(cl_device_id device, int param) {
        long[] size = {0};
        clGetDeviceInfo(device, param, 0, null, size);
        byte[] buffer = new byte[(int) size[0]];
        clGetDeviceInfo(device, param, buffer.length, Pointer.to(buffer), null);
        return cString(buffer);
    }

    static String cString(byte[] bytes) {
        int len = 0;
        while (len < bytes.length && bytes[len] != 0) {
            len++;
        }
        return new String(bytes, 0, len, StandardCharsets.UTF_8).trim();
    }
}
