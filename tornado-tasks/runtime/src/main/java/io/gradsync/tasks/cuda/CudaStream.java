package io.gradsync.tasks.cuda;

import static io.gradsync.tasks.cuda.driver.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;
import static jcuda.driver.JCudaDriver.cuStreamWaitValue32;

import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.ToIntFunction;
import jcuda.Pointer;
import jcuda.driver.CUevent_wait_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUresult;
import jcuda.driver.CUstreamWaitValue_flags;
import jcuda.driver.CUstream_flags;

/**
 * A CUDA stream of one GPU: one gradsync made ({@link CudaDevice#createStream}, non-blocking,
 * destroyed on close), or one another library made and gradsync only wraps
 * ({@link CudaDevice#wrapStream}: close forgets it, never destroys it).
 *
 * <p>Thread-safety: every method may be called from any thread; work queued from several threads
 * at once lands in some order, as with CUDA streams themselves. Closing while another thread
 * queues work waits for that call, and later calls throw {@link IllegalStateException}.
 */
public final class CudaStream implements DeviceStream {
    /** Pageable memory goes through ByteBuffers, which stop at 2 GiB. */
    private static final long PAGEABLE_PIECE = 1L << 30;

    private final CudaDevice device;
    private final CUstream stream;
    private final boolean owned;
    /** Held shared by every driver call on the stream, exclusively by close. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile boolean closed;

    CudaStream(CudaDevice device) {
        this.device = device;
        this.stream = new CUstream();
        this.owned = true;
        check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate", device.id());
    }

    /** Wraps a checked stream of another library. */
    CudaStream(CudaDevice device, CUstream foreign) {
        this.device = device;
        this.stream = foreign;
        this.owned = false;
    }

    /** True for a stream gradsync made (and destroys on close); false for a wrapped one. */
    public boolean isOwned() {
        return owned;
    }

    @Override
    public CudaDevice device() {
        return device;
    }

    /** The JCuda handle, for this package and (through {@code CudaHandles}) gradsync's own modules. */
    CUstream handle() {
        checkOpen();
        return stream;
    }

    /** The stream's handle as a C {@code CUstream} / {@code cudaStream_t}: hand it to any CUDA library. */
    public long address() {
        return NativeAddress.of(handle());
    }

    @Override
    public void copyToHost(DeviceBuffer src, long srcOffset, HostBuffer dst, long dstOffset, long bytes) {
        CudaBuffer from = own(src, "copyToHost source");
        src.checkRange(srcOffset, bytes, "copyToHost source");
        dst.checkRange(dstOffset, bytes, "copyToHost destination");
        device.bind();
        if (dst instanceof CudaHostBuffer pinned) {
            check(enqueue(st -> cuMemcpyDtoHAsync(pinned.pointer(dstOffset), from.pointer(srcOffset), bytes, st)),
                    "cuMemcpyDtoHAsync", device.id());
            return;
        }
        for (long done = 0; done < bytes; done += PAGEABLE_PIECE) {
            long n = Math.min(PAGEABLE_PIECE, bytes - done);
            Pointer host = Pointer.to(dst.segment().asSlice(dstOffset + done, n).asByteBuffer());
            long at = srcOffset + done;
            check(enqueue(st -> cuMemcpyDtoHAsync(host, from.pointer(at), n, st)), "cuMemcpyDtoHAsync", device.id());
        }
    }

    @Override
    public void copyFromHost(HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        CudaBuffer to = own(dst, "copyFromHost destination");
        src.checkRange(srcOffset, bytes, "copyFromHost source");
        dst.checkRange(dstOffset, bytes, "copyFromHost destination");
        device.bind();
        if (src instanceof CudaHostBuffer pinned) {
            check(enqueue(st -> cuMemcpyHtoDAsync(to.pointer(dstOffset), pinned.pointer(srcOffset), bytes, st)),
                    "cuMemcpyHtoDAsync", device.id());
            return;
        }
        for (long done = 0; done < bytes; done += PAGEABLE_PIECE) {
            long n = Math.min(PAGEABLE_PIECE, bytes - done);
            Pointer host = Pointer.to(src.segment().asSlice(srcOffset + done, n).asByteBuffer());
            long at = dstOffset + done;
            check(enqueue(st -> cuMemcpyHtoDAsync(to.pointer(at), host, n, st)), "cuMemcpyHtoDAsync", device.id());
        }
    }

    /**
     * Within one GPU a plain copy; across GPUs a peer copy (over NVLink where the GPUs have it),
     * issued as a unified-address {@code cuMemcpyAsync}: unlike {@code cuMemcpyPeerAsync} it may be
     * captured into a CUDA graph, and with peer access enabled it takes the same direct path.
     */
    @Override
    public void copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        CudaBuffer from = cuda(src, "copy source");
        CudaBuffer to = cuda(dst, "copy destination");
        if (from.device() != device && to.device() != device) {
            throw new IllegalArgumentException("copy between " + from.device().id() + " and " + to.device().id()
                    + " must be queued on a stream of one of them, not on " + device.id());
        }
        src.checkRange(srcOffset, bytes, "copy source");
        dst.checkRange(dstOffset, bytes, "copy destination");
        device.bind();
        if (from.device() == to.device()) {
            check(enqueue(st -> cuMemcpyDtoDAsync(to.pointer(dstOffset), from.pointer(srcOffset), bytes, st)),
                    "cuMemcpyDtoDAsync", device.id());
        } else {
            check(enqueue(st -> cuMemcpyAsync(to.pointer(dstOffset), from.pointer(srcOffset), bytes, st)),
                    "cuMemcpyAsync(" + from.device().id() + " -> " + to.device().id() + ")", device.id());
        }
    }

    @Override
    public void fill32(DeviceBuffer dst, long offset, long bytes, int value) {
        CudaBuffer to = own(dst, "fill destination");
        dst.checkRange(offset, bytes, "fill32");
        if (offset % 4 != 0 || bytes % 4 != 0) {
            throw new IllegalArgumentException("fill32 needs offset and size in whole 4-byte words, got "
                    + offset + " and " + bytes);
        }
        device.bind();
        check(enqueue(st -> cuMemsetD32Async(to.pointer(offset), value, bytes / 4, st)), "cuMemsetD32Async", device.id());
    }

    @Override
    public void record(DeviceEvent event) {
        CudaEvent e = event(event);
        if (e.device() != device) {
            throw new IllegalArgumentException("event of " + e.device().id() + " recorded on a stream of " + device.id());
        }
        device.bind();
        check(enqueue(st -> cuEventRecord(e.handle(), st)), "cuEventRecord", device.id());
    }

    /**
     * While this stream is being captured into a graph: a wait node on the event's record made
     * outside the graph, the latest one at each launch ({@code CU_EVENT_WAIT_EXTERNAL}); otherwise
     * as {@link #waitFor}.
     */
    void waitForExternal(DeviceEvent event) {
        CudaEvent e = event(event);
        device.bind();
        check(enqueue(st -> cuStreamWaitEvent(st, e.handle(), CUevent_wait_flags.CU_EVENT_WAIT_EXTERNAL)),
                "cuStreamWaitEvent(external)", device.id());
    }

    /** Events of other GPUs are allowed: that is how streams of different GPUs are ordered. */
    @Override
    public void waitFor(DeviceEvent event) {
        CudaEvent e = event(event);
        device.bind();
        check(enqueue(st -> cuStreamWaitEvent(st, e.handle(), 0)), "cuStreamWaitEvent", device.id());
    }

    /** {@code cuStreamWaitValue32} (GEQ, wrap-safe) on the flag's mapped word: the GPU polls host memory. */
    @Override
    public void waitUntil(io.gradsync.tasks.device.HostFlag flag, int value) {
        if (!(flag instanceof CudaHostFlag f) || !f.device().sameGpu(device)) {
            throw new IllegalArgumentException("a cuda stream of " + device.id() + " waits only for host flags of its GPU");
        }
        device.bind();
        int rc = enqueue(st -> cuStreamWaitValue32(st, f.mapped(), value, CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ));
        if (rc == CUresult.CUDA_ERROR_NOT_SUPPORTED) {
            throw new UnsupportedOperationException(device.id() + " does not support stream memory operations (cuStreamWaitValue32)");
        }
        check(rc, "cuStreamWaitValue32", device.id());
    }

    @Override
    public void synchronize() {
        device.bind();
        check(enqueue(st -> cuStreamSynchronize(st)), "cuStreamSynchronize", device.id());
    }

    /**
     * Runs one driver call on the stream's handle with the stream held open: {@link #close} waits
     * for calls in flight, so that no call reaches a destroyed stream. Returns the call's result code.
     */
    int enqueue(ToIntFunction<CUstream> call) {
        lock.readLock().lock();
        try {
            checkOpen();
            return call.applyAsInt(stream);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Waits for the calls in flight on other threads (a wait in {@link #synchronize} among them), then destroys an owned stream. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                if (owned) {
                    device.bind();
                    check(cuStreamDestroy(stream), "cuStreamDestroy", device.id());
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("stream of " + device.id() + " is closed");
        }
    }

    private CudaBuffer own(DeviceBuffer buffer, String what) {
        return (CudaBuffer) device.requireOwn(cuda(buffer, what), what);
    }

    private static CudaBuffer cuda(DeviceBuffer buffer, String what) {
        if (!(buffer instanceof CudaBuffer c)) {
            throw new IllegalArgumentException(what + " is a " + buffer.device().runtime().label()
                    + " buffer, not a cuda buffer");
        }
        return c;
    }

    private static CudaEvent event(DeviceEvent event) {
        if (!(event instanceof CudaEvent e)) {
            throw new IllegalArgumentException("a cuda stream needs cuda events");
        }
        return e;
    }
}
