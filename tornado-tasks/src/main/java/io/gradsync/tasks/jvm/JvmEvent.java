package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.DeviceEvent;
import java.util.concurrent.CountDownLatch;

/**
 * Completes when the stream's worker reaches it; remembers when, for timing. A fresh event counts
 * as completed, like a CUDA event never recorded; recording arms it again.
 */
final class JvmEvent implements DeviceEvent {
    private volatile CountDownLatch done = new CountDownLatch(0);
    private volatile long completedNanos = System.nanoTime();

    /** Called on the recording thread; returns the completion to run on the stream's worker. */
    Runnable arm() {
        CountDownLatch latch = new CountDownLatch(1);
        done = latch;
        return () -> {
            completedNanos = System.nanoTime();
            latch.countDown();
        };
    }

    /** A wait for the mark as it is now, to run on another stream's worker. */
    Runnable waiter() {
        CountDownLatch latch = done;
        return () -> await(latch);
    }

    @Override
    public void synchronize() {
        await(done);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for an event", e);
        }
    }

    @Override
    public boolean isDone() {
        return done.getCount() == 0;
    }

    @Override
    public double elapsedMillisSince(DeviceEvent earlier) {
        if (!(earlier instanceof JvmEvent e) || !e.isDone() || !isDone()) {
            throw new IllegalStateException("both events must be completed jvm events");
        }
        return (completedNanos - e.completedNanos) / 1e6;
    }

    @Override
    public void close() {
        // nothing native to free
    }
}
