package io.gradsync.tasks.opencl;

import static io.gradsync.tasks.opencl.OpenClCheck.check;
import static org.jocl.CL.CL_COMPLETE;
import static org.jocl.CL.CL_EVENT_COMMAND_EXECUTION_STATUS;
import static org.jocl.CL.CL_PROFILING_COMMAND_END;
import static org.jocl.CL.clGetEventInfo;
import static org.jocl.CL.clGetEventProfilingInfo;
import static org.jocl.CL.clReleaseEvent;
import static org.jocl.CL.clRetainEvent;
import static org.jocl.CL.clWaitForEvents;

import io.gradsync.tasks.device.DeviceEvent;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_event;

/**
 * A reusable event: each record replaces the OpenCL event (a marker) it holds. Never recorded,
 * it counts as complete, as a CUDA event does.
 *
 * <p>Thread-safety: as {@link io.gradsync.tasks.device.DeviceEvent}. A record on one thread may
 * replace (and release) the marker another thread is waiting on or enqueueing a wait for: every
 * use of the marker outside the lock holds a reference of its own ({@link #retained}).
 */
public final class OpenClEvent implements DeviceEvent {
    private final OpenClDevice device;
    private cl_event current;

    OpenClEvent(OpenClDevice device) {
        this.device = device;
    }

    OpenClDevice device() {
        return device;
    }

    synchronized void replace(cl_event marker) {
        if (current != null) {
            clReleaseEvent(current);
        }
        current = marker;
    }

    /**
     * The marker as it is now with a reference of the caller's, to give back with
     * {@code clReleaseEvent} once used; or null when never recorded.
     */
    synchronized cl_event retained() {
        if (current != null) {
            clRetainEvent(current);
        }
        return current;
    }

    @Override
    public void synchronize() {
        cl_event e = retained();
        if (e != null) {
            try {
                check(clWaitForEvents(1, new cl_event[] {e}), "clWaitForEvents", device.id());
            } finally {
                clReleaseEvent(e);
            }
        }
    }

    @Override
    public boolean isDone() {
        cl_event e = retained();
        if (e == null) {
            return true;
        }
        int[] status = {0};
        try {
            check(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, Sizeof.cl_int, Pointer.to(status), null),
                    "clGetEventInfo", device.id());
        } finally {
            clReleaseEvent(e);
        }
        if (status[0] < 0) {
            throw new io.gradsync.tasks.device.DeviceException("queued command", device.id(), status[0],
                    org.jocl.CL.stringFor_errorCode(status[0]));
        }
        return status[0] == CL_COMPLETE;
    }

    @Override
    public double elapsedMillisSince(DeviceEvent earlier) {
        if (!(earlier instanceof OpenClEvent e)) {
            throw new IllegalStateException("both events must be recorded opencl events");
        }
        cl_event mine = retained();
        cl_event theirs = e.retained();
        try {
            if (mine == null || theirs == null) {
                throw new IllegalStateException("both events must be recorded opencl events");
            }
            return (end(mine) - end(theirs)) / 1e6;
        } finally {
            if (mine != null) {
                clReleaseEvent(mine);
            }
            if (theirs != null) {
                clReleaseEvent(theirs);
            }
        }
    }

    private long end(cl_event e) {
        long[] t = {0};
        check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, Sizeof.cl_ulong, Pointer.to(t), null),
                "clGetEventProfilingInfo", device.id());
        return t[0];
    }

    @Override
    public void close() {
        replace(null);
    }
}
