package io.gradsync.sync.backend;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.HostFlag;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A host-averaging backend's asynchronous calls: the one background thread they run on (made on
 * first use), the call in flight, and per device the host flag its queued copies wait on.
 *
 * <p>Thread-safety: used under its synchronizer's lock.
 */
final class HostCalls {
    private final List<? extends Device> devices;
    private final String label;
    private final HostFlag[] flags;
    private ExecutorService worker;
    private Future<?> pending;

    /** @param label the backend's, naming the thread and the interruption */
    HostCalls(List<? extends Device> devices, String label) {
        this.devices = devices;
        this.label = label;
        this.flags = new HostFlag[devices.size()];
    }

    /** Every device's host flag (made on first use), or null where some device has none. */
    HostFlag[] flags() {
        try {
            for (int r = 0; r < flags.length; r++) {
                if (flags[r] == null) {
                    flags[r] = devices.get(r).createHostFlag();
                }
            }
        } catch (UnsupportedOperationException e) {
            return null;
        }
        return flags;
    }

    /** Runs {@code call} on the background thread; it is the call in flight until {@link #awaitPending}. */
    Future<?> submit(Runnable call) {
        if (worker == null) {
            worker = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "gradsync-" + label + "-async");
                t.setDaemon(true);
                return t;
            });
        }
        Future<?> f = worker.submit(call);
        pending = f;
        return f;
    }

    /** Waits for the background call in flight; its failure is its handle's to report. */
    void awaitPending() {
        Future<?> f = pending;
        if (f == null) {
            return;
        }
        try {
            f.get();
        } catch (ExecutionException e) {
            // reported by that call's handle
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the previous " + label + " call", e);
        }
        pending = null;
    }

    /** Lets the thread end once its last call has; called after {@link #awaitPending}. */
    void shutdown() {
        if (worker != null) {
            worker.shutdown();
        }
    }

    void closeFlags() {
        for (HostFlag f : flags) {
            Resources.closeQuietly(f);
        }
    }
}
