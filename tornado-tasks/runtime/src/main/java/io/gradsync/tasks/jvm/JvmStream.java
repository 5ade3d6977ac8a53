package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A stream of a {@link JvmDevice}: one worker thread runs the queued work in order, so the
 * caller overlaps with it exactly as it would with a GPU stream.
 *
 * <p>Failures are sticky, as a CUDA stream's errors are: the first task that throws is kept until
 * the next {@link #synchronize()} reports it (naming the task and the device), the work queued
 * after it is skipped until then, and every event recorded after it carries it, so that waiting
 * for that event, or a stream told to wait for it, fails too. A later task that succeeds never
 * hides an earlier one that failed.
 *
 * <p>Thread-safety: every method may be called from any thread; work queued from several threads
 * at once runs in the order it was queued.
 */
public final class JvmStream implements DeviceStream {
    private final JvmDevice device;
    private final ExecutorService worker;
    /** The last work queued (written under the lock, read without it). */
    private volatile Future<?> last;
    /** The first failure since the last report, or null. */
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();

    JvmStream(JvmDevice device) {
        this.device = device;
        this.worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, device.id() + "-stream");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public JvmDevice device() {
        return device;
    }

    /** Queues any work, named "submitted work" if it fails; see {@link #submit(String, Runnable)}. */
    public void submit(Runnable work) {
        submit("submitted work", work);
    }

    /**
     * Queues any work; kernels of the JVM runtime are submitted here too. If it throws, the stream
     * keeps the failure as {@code what} on this device until the next {@link #synchronize()}.
     */
    public void submit(String what, Runnable work) {
        enqueue(() -> {
            if (failure.get() != null) {
                return; // after a failure nothing runs until it is reported
            }
            try {
                work.run();
            } catch (RuntimeException | Error e) {
                failure.compareAndSet(null, new IllegalStateException(what + " on " + device.id() + " failed: " + e, e));
            }
        });
    }

    private synchronized void enqueue(Runnable step) {
        if (worker.isShutdown()) {
            throw new IllegalStateException("stream of " + device.id() + " is closed");
        }
        last = worker.submit(step);
    }

    @Override
    public void copyToHost(DeviceBuffer src, long srcOffset, HostBuffer dst, long dstOffset, long bytes) {
        MemorySegment from = owned(src, "source").segment();
        src.checkRange(srcOffset, bytes, "copyToHost source");
        dst.checkRange(dstOffset, bytes, "copyToHost destination");
        MemorySegment to = dst.segment();
        submit("copyToHost of " + bytes + " bytes", () -> MemorySegment.copy(from, srcOffset, to, dstOffset, bytes));
    }

    @Override
    public void copyFromHost(HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        MemorySegment to = owned(dst, "destination").segment();
        src.checkRange(srcOffset, bytes, "copyFromHost source");
        dst.checkRange(dstOffset, bytes, "copyFromHost destination");
        MemorySegment from = src.segment();
        submit("copyFromHost of " + bytes + " bytes", () -> MemorySegment.copy(from, srcOffset, to, dstOffset, bytes));
    }

    @Override
    public void copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        MemorySegment from = JvmDevice.own(src, "copy source").segment();
        MemorySegment to = owned(dst, "copy destination").segment();
        src.checkRange(srcOffset, bytes, "copy source");
        dst.checkRange(dstOffset, bytes, "copy destination");
        submit("copy of " + bytes + " bytes", () -> MemorySegment.copy(from, srcOffset, to, dstOffset, bytes));
    }

    @Override
    public void fill32(DeviceBuffer dst, long offset, long bytes, int value) {
        MemorySegment to = owned(dst, "fill destination").segment();
        dst.checkRange(offset, bytes, "fill32");
        if (offset % 4 != 0 || bytes % 4 != 0) {
            throw new IllegalArgumentException("fill32 needs offset and size in whole 4-byte words, got "
                    + offset + " and " + bytes);
        }
        submit("fill32 of " + bytes + " bytes", () -> {
            MemorySegment words = to.asSlice(offset, bytes);
            for (long i = 0, n = bytes / 4; i < n; i++) {
                words.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, value);
            }
        });
    }

    @Override
    public void record(DeviceEvent event) {
        if (!(event instanceof JvmEvent jvm)) {
            throw new IllegalArgumentException("a jvm stream can only record jvm events");
        }
        JvmEvent.Mark mark = jvm.arm();
        enqueue(() -> mark.complete(failure.get())); // always runs: other streams and the host may wait for it
    }

    @Override
    public void waitFor(DeviceEvent event) {
        if (!(event instanceof JvmEvent jvm)) {
            throw new IllegalArgumentException("a jvm stream can only wait for jvm events");
        }
        JvmEvent.Mark mark = jvm.current();
        enqueue(() -> {
            if (failure.get() != null) {
                return;
            }
            RuntimeException failed = mark.await();
            if (failed != null) {
                failure.compareAndSet(null, new IllegalStateException(device.id() + " waited for an event that follows failed work: "
                        + failed.getMessage(), failed));
            }
        });
    }

    @Override
    public void waitUntil(io.gradsync.tasks.device.HostFlag flag, int value) {
        if (!(flag instanceof JvmHostFlag jvm)) {
            throw new IllegalArgumentException("a jvm stream can only wait for jvm host flags");
        }
        submit("a wait for a host flag", () -> jvm.awaitAtLeast(value));
    }

    /**
     * Blocks until all queued work has finished.
     *
     * @throws IllegalStateException the stream's first failure since the last report, naming the
     *     task and device (the work queued after it was skipped); the stream then runs work again
     */
    @Override
    public void synchronize() {
        Future<?> f = last;
        if (f != null) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + device.id(), e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("work on " + device.id() + " failed: " + e.getCause(), e.getCause());
            }
        }
        // read first: a stream waited for every call is rarely failed, and a swap is a locked write
        RuntimeException failed = failure.get() == null ? null : failure.getAndSet(null);
        if (failed != null) {
            throw failed;
        }
    }

    private JvmBuffer owned(DeviceBuffer buffer, String what) {
        JvmBuffer jvm = JvmDevice.own(buffer, what);
        device.requireOwn(jvm, what);
        return jvm;
    }

    @Override
    public boolean isClosed() {
        return worker.isShutdown();
    }

    @Override
    public synchronized void close() {
        worker.shutdown();
        device.forget(this);
    }
}
