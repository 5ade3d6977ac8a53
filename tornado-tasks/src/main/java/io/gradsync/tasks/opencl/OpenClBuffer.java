package io.gradsync.tasks.opencl;

import static org.jocl.CL.clReleaseMemObject;

import io.gradsync.tasks.device.DeviceBuffer;
import org.jocl.cl_mem;

/** A {@code cl_mem} of the device's platform context. */
public final class OpenClBuffer implements DeviceBuffer {
    private final OpenClDevice device;
    private final cl_mem mem;
    private final long bytes;
    private volatile boolean closed;

    OpenClBuffer(OpenClDevice device, cl_mem mem, long bytes) {
        this.device = device;
        this.mem = mem;
        this.bytes = bytes;
    }

    @Override
    public OpenClDevice device() {
        return device;
    }

    @Override
    public long byteSize() {
        return bytes;
    }

    /** The memory object, for kernel arguments and copies. */
    public cl_mem handle() {
        if (closed) {
            throw new IllegalStateException("buffer on " + device.id() + " is closed");
        }
        return mem;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            OpenClCheck.check(clReleaseMemObject(mem), "clReleaseMemObject", device.id());
        }
    }
}
