package io.gradsync.tasks.cuda;

import static io.gradsync.tasks.cuda.driver.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import io.gradsync.tasks.device.DeviceEvent;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;

/**
 * A CUDA event with timing enabled (the cost is negligible next to a copy or a kernel).
 *
 * <p>Thread-safety: as {@link io.gradsync.tasks.device.DeviceEvent}; any thread (the GPU's context is made current per call).
 */
public final class CudaEvent implements DeviceEvent {
    private final CudaDevice device;
    private final CUevent event = new CUevent();
    private volatile boolean closed;

    CudaEvent(CudaDevice device) {
        this.device = device;
        check(cuEventCreate(event, CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate", device.id());
    }

    CudaDevice device() {
        return device;
    }

    CUevent handle() {
        if (closed) {
            throw new IllegalStateException("event of " + device.id() + " is closed");
        }
        return event;
    }

    @Override
    public void synchronize() {
        check(cuEventSynchronize(handle()), "cuEventSynchronize", device.id());
    }

    @Override
    public boolean isDone() {
        int rc = cuEventQuery(handle());
        if (rc == CUresult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        check(rc, "cuEventQuery", device.id());
        return true;
    }

    @Override
    public double elapsedMillisSince(DeviceEvent earlier) {
        if (!(earlier instanceof CudaEvent e)) {
            throw new IllegalArgumentException("both events must be cuda events");
        }
        float[] ms = {0};
        check(cuEventElapsedTime(ms, e.handle(), handle()), "cuEventElapsedTime", device.id());
        return ms[0];
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            check(cuEventDestroy(event), "cuEventDestroy", device.id());
        }
    }
}
