package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.CpuOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The host threads that sum chunks: the calling thread and up to {@code threads - 1} helpers, made
 * once. When one fails, the others stop waiting for chunks that will never come.
 */
final class StagingWorkers {
    private final int threads;
    private final int slots;
    private final ExecutorService pool;
    /** Set when a worker fails, so that the others stop waiting. */
    private volatile boolean failed;

    StagingWorkers(int devices, CpuOptions options) {
        this.threads = options.threads();
        this.slots = options.slots();
        pool = devices > 1 && threads > 1 ? Executors.newFixedThreadPool(threads - 1, r -> {
            Thread t = new Thread(r, "gradsync-staging");
            t.setDaemon(true);
            return t;
        }) : null;
    }

    /** True once a worker of the current run has failed. */
    boolean failed() {
        return failed;
    }

    /**
     * Runs {@code work} on this thread and on as many helpers as the chunks keep busy; returns the
     * first failure (every worker has stopped by then), or null.
     */
    RuntimeException run(int chunks, Runnable work) {
        Runnable guarded = () -> {
            try {
                work.run();
            } catch (RuntimeException | Error e) {
                failed = true;
                throw e;
            }
        };
        failed = false;
        int helpers = pool == null ? 0 : Math.max(0, Math.min(threads, Math.min(slots, chunks)) - 1);
        List<Future<?>> running = new ArrayList<>(helpers);
        for (int i = 0; i < helpers; i++) {
            running.add(pool.submit(guarded));
        }
        RuntimeException failure = null;
        try {
            guarded.run();
        } catch (RuntimeException e) {
            failure = e;
        }
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException re ? re
                            : new IllegalStateException("host staging failed", e.getCause());
                }
            } catch (InterruptedException e) {
                // the call returns only once no worker writes any more: they stop at their next chunk
                failed = true;
                awaitStopped(running);
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted during host staging (its workers stopped; the gradients of the"
                        + " call are undefined)", e);
            }
        }
        return failure;
    }

    /** Waits for every worker to end, interrupts or not (the interrupt status is kept). */
    private static void awaitStopped(List<Future<?>> running) {
        boolean interrupted = false;
        for (Future<?> f : running) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (InterruptedException again) {
                    interrupted = true;
                } catch (ExecutionException | java.util.concurrent.CancellationException ended) {
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Spins briefly, then yields, until {@code counters[slot]} says chunk {@code chunk} was queued. */
    void awaitQueued(AtomicLongArray counters, int slot, long chunk) {
        for (int spins = 0; counters.get(slot) < chunk; spins++) {
            if (failed) {
                throw new IllegalStateException("host staging stopped: another worker failed");
            }
            if (spins < 1000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    void shutdown() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
