package io.gradsync.tasks.opencl;

import static io.gradsync.tasks.opencl.OpenClCheck.check;
import static org.jocl.CL.CL_FALSE;
import static org.jocl.CL.CL_QUEUE_PROFILING_ENABLE;
import static org.jocl.CL.CL_QUEUE_PROPERTIES;
import static org.jocl.CL.clCreateCommandQueueWithProperties;
import static org.jocl.CL.clEnqueueBarrierWithWaitList;
import static org.jocl.CL.clEnqueueCopyBuffer;
import static org.jocl.CL.clEnqueueFillBuffer;
import static org.jocl.CL.clEnqueueMarkerWithWaitList;
import static org.jocl.CL.clEnqueueReadBuffer;
import static org.jocl.CL.clEnqueueWriteBuffer;
import static org.jocl.CL.clFinish;
import static org.jocl.CL.clFlush;
import static org.jocl.CL.clReleaseCommandQueue;

import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import org.jocl.Pointer;
import org.jocl.cl_command_queue;
import org.jocl.cl_event;
import org.jocl.cl_queue_properties;

/**
 * An in-order command queue with profiling, the OpenCL counterpart of a stream.
 *
 * <p>Thread-safety: as {@link io.gradsync.tasks.device.DeviceStream}.
 */
public final class OpenClQueue implements DeviceStream {
    /** Host memory reaches JOCL as ByteBuffers, which stop at 2 GiB. */
    private static final long HOST_PIECE = 1L << 30;

    private final OpenClDevice device;
    private final cl_command_queue queue;
    private volatile boolean closed;
    /**
     * Every native call on the queue holds this shared; close holds it exclusively: a queue closed
     * by one thread while another enqueues on it or waits for it must not be released under it.
     */
    private final ReentrantReadWriteLock use = new ReentrantReadWriteLock();

    OpenClQueue(OpenClDevice device) {
        this.device = device;
        cl_queue_properties props = new cl_queue_properties();
        props.addProperty(CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE);
        int[] rc = {0};
        this.queue = clCreateCommandQueueWithProperties(device.platform().context(), device.handle(), props, rc);
        check(rc[0], "clCreateCommandQueueWithProperties", device.id());
    }

    @Override
    public OpenClDevice device() {
        return device;
    }

    /** The queue, inside {@link #use}. */
    cl_command_queue handle() {
        if (closed) {
            throw new IllegalStateException("queue of " + device.id() + " is closed");
        }
        return queue;
    }

    /** Runs {@code call} on the queue while it cannot be closed; throws when it is closed. */
    void enqueue(Consumer<cl_command_queue> call) {
        use.readLock().lock();
        try {
            call.accept(handle());
        } finally {
            use.readLock().unlock();
        }
    }

    /** Waits for the queue's work unless it is closed (then there is nothing left to wait for). */
    void finishIfOpen() {
        use.readLock().lock();
        try {
            if (!closed) {
                check(clFinish(queue), "clFinish", device.id());
            }
        } finally {
            use.readLock().unlock();
        }
    }

    @Override
    public void copyToHost(DeviceBuffer src, long srcOffset, HostBuffer dst, long dstOffset, long bytes) {
        OpenClBuffer from = own(src, "copyToHost source");
        src.checkRange(srcOffset, bytes, "copyToHost source");
        dst.checkRange(dstOffset, bytes, "copyToHost destination");
        for (long done = 0; done < bytes; done += HOST_PIECE) {
            long n = Math.min(HOST_PIECE, bytes - done);
            Pointer host = Pointer.to(dst.segment().asSlice(dstOffset + done, n).asByteBuffer());
            long at = srcOffset + done;
            enqueue(q -> check(clEnqueueReadBuffer(q, from.handle(), CL_FALSE, at, n, host, 0, null, null),
                    "clEnqueueReadBuffer", device.id()));
        }
        enqueue(q -> clFlush(q));
    }

    @Override
    public void copyFromHost(HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        OpenClBuffer to = own(dst, "copyFromHost destination");
        src.checkRange(srcOffset, bytes, "copyFromHost source");
        dst.checkRange(dstOffset, bytes, "copyFromHost destination");
        for (long done = 0; done < bytes; done += HOST_PIECE) {
            long n = Math.min(HOST_PIECE, bytes - done);
            Pointer host = Pointer.to(src.segment().asSlice(srcOffset + done, n).asByteBuffer());
            long at = dstOffset + done;
            enqueue(q -> check(clEnqueueWriteBuffer(q, to.handle(), CL_FALSE, at, n, host, 0, null, null),
                    "clEnqueueWriteBuffer", device.id()));
        }
        enqueue(q -> clFlush(q));
    }

    /** Buffers of one platform share its context, so the runtime copies between its devices. */
    @Override
    public void copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        OpenClBuffer from = opencl(src, "copy source");
        OpenClBuffer to = opencl(dst, "copy destination");
        if (from.device().platform() != to.device().platform()) {
            throw new IllegalArgumentException("copy between OpenCL platforms (" + from.device().platform().name()
                    + ", " + to.device().platform().name() + ") must go through host memory");
        }
        src.checkRange(srcOffset, bytes, "copy source");
        dst.checkRange(dstOffset, bytes, "copy destination");
        enqueue(q -> check(clEnqueueCopyBuffer(q, from.handle(), to.handle(), srcOffset, dstOffset, bytes, 0, null, null),
                "clEnqueueCopyBuffer", device.id()));
        enqueue(q -> clFlush(q));
    }

    @Override
    public void fill32(DeviceBuffer dst, long offset, long bytes, int value) {
        OpenClBuffer to = own(dst, "fill destination");
        dst.checkRange(offset, bytes, "fill32");
        if (offset % 4 != 0 || bytes % 4 != 0) {
            throw new IllegalArgumentException("fill32 needs offset and size in whole 4-byte words, got "
                    + offset + " and " + bytes);
        }
        enqueue(q -> check(clEnqueueFillBuffer(q, to.handle(), Pointer.to(new int[] {value}), 4, offset, bytes, 0, null, null),
                "clEnqueueFillBuffer", device.id()));
        enqueue(q -> clFlush(q));
    }

    @Override
    public void record(DeviceEvent event) {
        OpenClEvent e = event(event);
        if (e.device() != device) {
            throw new IllegalArgumentException("event of " + e.device().id() + " recorded on a queue of " + device.id());
        }
        cl_event marker = new cl_event();
        enqueue(q -> check(clEnqueueMarkerWithWaitList(q, 0, null, marker), "clEnqueueMarkerWithWaitList", device.id()));
        enqueue(q -> clFlush(q));
        e.replace(marker);
    }

    /** Within a platform the queue waits on the device; across platforms the caller waits. */
    @Override
    public void waitFor(DeviceEvent event) {
        OpenClEvent e = event(event);
        if (e.device().platform() != device.platform()) {
            e.synchronize();
            return;
        }
        cl_event marker = e.retained(); // a record on another thread may release the event's own reference meanwhile
        if (marker == null) {
            return;
        }
        try {
            enqueue(q -> check(clEnqueueBarrierWithWaitList(q, 1, new cl_event[] {marker}, null),
                    "clEnqueueBarrierWithWaitList", device.id()));
        } finally {
            org.jocl.CL.clReleaseEvent(marker);
        }
    }

    @Override
    public void synchronize() {
        enqueue(q -> check(clFinish(q), "clFinish", device.id()));
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        use.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            clFinish(queue);
            clReleaseCommandQueue(queue);
        } finally {
            use.writeLock().unlock();
        }
        device.forget(this);
    }

    private OpenClBuffer own(DeviceBuffer buffer, String what) {
        return (OpenClBuffer) device.requireOwn(opencl(buffer, what), what);
    }

    private static OpenClBuffer opencl(DeviceBuffer buffer, String what) {
        if (!(buffer instanceof OpenClBuffer b)) {
            throw new IllegalArgumentException(what + " is a " + buffer.device().runtime().label()
                    + " buffer, not an opencl buffer");
        }
        return b;
    }

    private static OpenClEvent event(DeviceEvent event) {
        if (!(event instanceof OpenClEvent e)) {
            throw new IllegalArgumentException("an opencl queue needs opencl events");
        }
        return e;
    }
}
