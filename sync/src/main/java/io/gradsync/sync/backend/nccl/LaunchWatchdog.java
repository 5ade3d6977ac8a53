package io.gradsync.sync.backend.nccl;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Breaks a native call that blocks past its deadline. NCCL's enqueue can block (connection setup
 * with a peer that died) and only {@code ncclCommAbort} from another thread unblocks it. The hot
 * path only writes a deadline and flips a state (no wake-up, no allocation); this daemon thread
 * looks at it every {@link #TICK_MILLIS} ms and runs the abort action once when it is overdue.
 */
final class LaunchWatchdog implements AutoCloseable {
    static final long TICK_MILLIS = 20;
    private static final int IDLE = 0;
    private static final int ARMED = 1;
    private static final int FIRED = 2;

    private final AtomicInteger state = new AtomicInteger(IDLE);
    private final CountDownLatch aborted = new CountDownLatch(1);
    private final Runnable abort;
    private final Thread thread;
    private volatile long deadlineNanos;
    private volatile boolean stopped;

    LaunchWatchdog(String name, Runnable abort) {
        this.abort = abort;
        this.thread = Thread.ofPlatform().daemon().name(name).start(this::watch);
    }

    /** Before a native call that may block: it must return by {@code deadline} ({@link System#nanoTime()}). */
    void arm(long deadline) {
        deadlineNanos = deadline;
        state.set(ARMED);
    }

    /**
     * After the call returned. False when the watchdog fired: the abort action has then finished
     * (this waits for it) and the caller must not touch the communicators again.
     */
    boolean disarm() {
        if (state.compareAndSet(ARMED, IDLE)) {
            return true;
        }
        awaitAbort();
        return false;
    }

    boolean fired() {
        return state.get() == FIRED;
    }

    private void awaitAbort() {
        try {
            aborted.await(1, TimeUnit.MINUTES); // an abort that hangs too is NCCL's bug; do not hang with it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void watch() {
        while (!stopped) {
            try {
                Thread.sleep(TICK_MILLIS);
            } catch (InterruptedException e) {
                if (stopped) {
                    return;
                }
            }
            if (state.get() == ARMED && System.nanoTime() - deadlineNanos > 0 && state.compareAndSet(ARMED, FIRED)) {
                try {
                    abort.run();
                } finally {
                    aborted.countDown();
                }
                return;
            }
        }
    }

    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
    }
}
