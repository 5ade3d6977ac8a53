package io.gradsync.tasks.opencl;

import static org.jocl.CL.clReleaseMemObject;

import io.gradsync.tasks.device.AbstractDeviceBuffer;
import org.jocl.cl_mem;

/**
 * A {@code cl_mem} of the device's platform context.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class OpenClBuffer extends AbstractDeviceBuffer<OpenClDevice> {
    private final cl_mem mem;

    OpenClBuffer(OpenClDevice device, cl_mem mem, long bytes) {
        super(device, bytes);
        this.mem = mem;
    }

    /** The memory object, for kernel arguments and copies. */
    cl_mem handle() {
        checkOpen();
        return mem;
    }

    @Override
    protected void free() {
        OpenClCheck.check(clReleaseMemObject(mem), "clReleaseMemObject", device().id());
    }
}
