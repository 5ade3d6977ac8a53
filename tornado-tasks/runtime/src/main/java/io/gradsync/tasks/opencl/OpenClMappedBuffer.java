package io.gradsync.tasks.opencl;

import static io.gradsync.tasks.opencl.OpenClCheck.check;
import static org.jocl.CL.CL_MAP_READ;
import static org.jocl.CL.CL_MAP_WRITE;
import static org.jocl.CL.CL_MEM_ALLOC_HOST_PTR;
import static org.jocl.CL.CL_MEM_READ_WRITE;
import static org.jocl.CL.CL_TRUE;
import static org.jocl.CL.clCreateBuffer;
import static org.jocl.CL.clCreateCommandQueueWithProperties;
import static org.jocl.CL.clEnqueueMapBuffer;
import static org.jocl.CL.clEnqueueUnmapMemObject;
import static org.jocl.CL.clFinish;
import static org.jocl.CL.clReleaseCommandQueue;
import static org.jocl.CL.clReleaseMemObject;

import io.gradsync.tasks.device.AbstractHostBuffer;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.jocl.cl_command_queue;
import org.jocl.cl_mem;
import org.jocl.cl_queue_properties;

/**
 * Pinned host memory the OpenCL way: a buffer allocated by the runtime in host memory
 * ({@code CL_MEM_ALLOC_HOST_PTR}) and mapped for as long as it lives. Java sees the mapping as a
 * segment; copies pass its address to {@code clEnqueueRead/WriteBuffer}, which the runtime
 * recognises as its own pinned memory.
 */
final class OpenClMappedBuffer extends AbstractHostBuffer {
    private final OpenClDevice device;
    private final cl_mem mem;
    private final cl_command_queue queue;
    private final ByteBuffer mapped;

    private OpenClMappedBuffer(OpenClDevice device, cl_mem mem, cl_command_queue queue, ByteBuffer mapped, long bytes) {
        super(MemorySegment.ofBuffer(mapped).asSlice(0, bytes), true);
        this.device = device;
        this.mem = mem;
        this.queue = queue;
        this.mapped = mapped;
    }

    static OpenClMappedBuffer allocate(OpenClDevice device, long bytes) {
        int[] rc = {0};
        cl_mem mem = clCreateBuffer(device.platform().context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, null, rc);
        check(rc[0], "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, " + bytes + " bytes)", device.id());
        // A queue of its own to map and unmap, so that closing the buffer never waits on others' work.
        cl_command_queue queue = clCreateCommandQueueWithProperties(device.platform().context(), device.handle(),
                new cl_queue_properties(), rc);
        if (rc[0] != 0) {
            clReleaseMemObject(mem);
            check(rc[0], "clCreateCommandQueueWithProperties", device.id());
        }
        ByteBuffer mapped = clEnqueueMapBuffer(queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, null, null, rc);
        if (rc[0] != 0 || mapped == null) {
            clReleaseCommandQueue(queue);
            clReleaseMemObject(mem);
            check(rc[0] != 0 ? rc[0] : -5, "clEnqueueMapBuffer(" + bytes + " bytes)", device.id());
        }
        return new OpenClMappedBuffer(device, mem, queue, mapped, bytes);
    }

    @Override
    protected void free() {
        check(clEnqueueUnmapMemObject(queue, mem, mapped, 0, null, null), "clEnqueueUnmapMemObject", device.id());
        clFinish(queue);
        clReleaseCommandQueue(queue);
        check(clReleaseMemObject(mem), "clReleaseMemObject", device.id());
    }
}
