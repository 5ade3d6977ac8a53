package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.DeviceEvent;
import java.util.concurrent.CountDownLatch;

/**
 * Completes when the stream's worker reaches it; remembers when, for timing, and whether a task
 * before it on its stream had failed (then waiting for it throws, and a stream told to wait for it
 * fails too: a failure travels along the events as it would stop a CUDA context). A fresh event
 * counts as completed, like a CUDA event never recorded; recording arms it again.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
final class JvmEvent implements DeviceEvent {
    private volatile Mark mark = Mark.completed();

    /** One recording of the event: its latch, when it completed, and the failure it carries (or null). */
    static final class Mark {
        private final CountDownLatch latch;
        private volatile long completedNanos;
        private volatile RuntimeException failure;

        private Mark(int count) {
            this.latch = new CountDownLatch(count);
            this.completedNanos = System.nanoTime();
        }

        static Mark completed() {
            return new Mark(0);
        }

        /** Run on the recording stream's worker: the failure that stream holds, or null. */
        void complete(RuntimeException failed) {
            failure = failed;
            completedNanos = System.nanoTime();
            latch.countDown();
        }

        /** Blocks until completed; returns the failure it carries, or null. */
        RuntimeException await() {
            try {
                latch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for an event", e);
            }
            return failure;
        }

        boolean isDone() {
            return latch.getCount() == 0;
        }
    }

    /** Called on the recording thread; returns the mark that the stream's worker completes. */
    Mark arm() {
        Mark m = new Mark(1);
        mark = m;
        return m;
    }

    /** The mark as it is now, for another stream's worker to wait for. */
    Mark current() {
        return mark;
    }

    /** @throws IllegalStateException when a task before the mark on its stream failed */
    @Override
    public void synchronize() {
        RuntimeException failed = mark.await();
        if (failed != null) {
            throw new IllegalStateException("an event follows failed work: " + failed.getMessage(), failed);
        }
    }

    @Override
    public boolean isDone() {
        return mark.isDone();
    }

    @Override
    public double elapsedMillisSince(DeviceEvent earlier) {
        if (!(earlier instanceof JvmEvent e) || !e.isDone() || !isDone()) {
            throw new IllegalStateException("both events must be completed jvm events");
        }
        return (mark.completedNanos - e.mark.completedNanos) / 1e6;
    }

    @Override
    public void close() {
        // nothing native to free
    }
}
