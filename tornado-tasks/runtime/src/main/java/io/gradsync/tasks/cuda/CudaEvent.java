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
 * A CUDA event, with timing ({@link CudaDevice#createEvent}) or without it
 * ({@link CudaDevice#createUntimedEvent}: for ordering and waiting only, and cheaper to record, as
 * the GPU writes no timestamp).
 *
 * <p>Thread-safety: as {@link io.gradsync.tasks.device.DeviceEvent}; any thread (the GPU's context is made current per call).
 */
public final class CudaEvent implements DeviceEvent {
    private final CudaDevice device;
    private final CUevent event = new CUevent();
    private final boolean timed;
    private volatile boolean closed;

    CudaEvent(CudaDevice device, boolean timed) {
        this.device = device;
        this.timed = timed;
        check(cuEventCreate(event, timed ? CUevent_flags.CU_EVENT_DEFAULT : CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate",
                device.id());
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
        if (!timed || !e.timed) {
            throw new IllegalStateException("an event of " + (timed ? e : this).device.id()
                    + " was made without timing (createUntimedEvent): time with events from createEvent");
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
