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

/**
 * A stream of a {@link JvmDevice}: one worker thread runs the queued work in order, so the
 * caller overlaps with it exactly as it would with a GPU stream.
 */
public final class JvmStream implements DeviceStream {
    private final JvmDevice device;
    private final ExecutorService worker;
    private volatile Future<?> last;

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

    /** Queues any work; kernels of the JVM runtime are submitted here too. Safe from any thread. */
    public synchronized void submit(Runnable work) {
        if (worker.isShutdown()) {
            throw new IllegalStateException("stream of " + device.id() + " is closed");
        }
        last = worker.submit(work);
    }

    @Override
    public void copyToHost(DeviceBuffer src, long srcOffset, HostBuffer dst, long dstOffset, long bytes) {
        MemorySegment from = owned(src, "source").segment();
        src.checkRange(srcOffset, bytes, "copyToHost source");
        dst.checkRange(dstOffset, bytes, "copyToHost destination");
        MemorySegment to = dst.segment();
        submit(() -> MemorySegment.copy(from, srcOffset, to, dstOffset, bytes));
    }

    @Override
    public void copyFromHost(HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        MemorySegment to = owned(dst, "destination").segment();
        src.checkRange(srcOffset, bytes, "copyFromHost source");
        dst.checkRange(dstOffset, bytes, "copyFromHost destination");
        MemorySegment from = src.segment();
        submit(() -> MemorySegment.copy(from, srcOffset, to, dstOffset, bytes));
    }

    @Override
    public void copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        MemorySegment from = JvmDevice.own(src, "copy source").segment();
        MemorySegment to = owned(dst, "copy destination").segment();
        src.checkRange(srcOffset, bytes, "copy source");
        dst.checkRange(dstOffset, bytes, "copy destination");
        submit(() -> MemorySegment.copy(from, srcOffset, to, dstOffset, bytes));
    }

    @Override
    public void fill32(DeviceBuffer dst, long offset, long bytes, int value) {
        MemorySegment to = owned(dst, "fill destination").segment();
        dst.checkRange(offset, bytes, "fill32");
        if (offset % 4 != 0 || bytes % 4 != 0) {
            throw new IllegalArgumentException("fill32 needs offset and size in whole 4-byte words, got "
                    + offset + " and " + bytes);
        }
        submit(() -> {
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
        submit(jvm.arm()::run);
    }

    @Override
    public void waitFor(DeviceEvent event) {
        if (!(event instanceof JvmEvent jvm)) {
            throw new IllegalArgumentException("a jvm stream can only wait for jvm events");
        }
        submit(jvm.waiter());
    }

    @Override
    public void waitUntil(io.gradsync.tasks.device.HostFlag flag, int value) {
        if (!(flag instanceof JvmHostFlag jvm)) {
            throw new IllegalArgumentException("a jvm stream can only wait for jvm host flags");
        }
        submit(() -> jvm.awaitAtLeast(value));
    }

    @Override
    public void synchronize() {
        Future<?> f = last;
        if (f == null) {
            return;
        }
        try {
            f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + device.id(), e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("work on " + device.id() + " failed: " + e.getCause(), e.getCause());
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
    public void close() {
        worker.shutdown();
        device.forget(this);
    }
}
