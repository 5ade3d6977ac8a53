package io.gradsync.sync.backend;

import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncFailedException;
import io.gradsync.sync.SyncHandle;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * The handles of asynchronous calls ({@link SyncHandle}) that the local synchronizers return, and
 * how a failure is pinned on a replica.
 */
public final class LocalHandles {
    private LocalHandles() {
    }

    /** The handle of a call running in the background. */
    record FutureHandle(SyncBackend backend, List<? extends Device> devices, Future<?> call) implements SyncHandle {
        @Override
        public void await() {
            try {
                call.get();
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                int r = failedReplica(devices, cause);
                throw new SyncFailedException(backend, r, r < 0 ? null : devices.get(r).id(), cause);
            } catch (InterruptedException e) { // the wait was cut short, not the call: it goes on
                Thread.currentThread().interrupt();
                throw new IllegalStateException(backend.label() + ": interrupted while waiting for the call; it goes on (await again)", e);
            }
        }

        @Override
        public boolean isDone() {
            return call.isDone();
        }
    }

    /**
     * The replica whose device a failure names (device errors name their device), or -1: the
     * deepest cause that names one, as a wait that follows failed work names its own device first
     * and the one whose work failed in its cause.
     */
    public static int failedReplica(List<? extends Device> devices, Throwable failure) {
        int found = -1;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            int r = named(devices, t.getMessage());
            found = r >= 0 ? r : found;
        }
        return found;
    }

    private static int named(List<? extends Device> devices, String text) {
        String message = String.valueOf(text);
        for (int r = devices.size() - 1; r >= 0; r--) { // cuda:0#1 before cuda:0
            String id = devices.get(r).id();
            if (message.matches("(?s).*\\b" + java.util.regex.Pattern.quote(id) + "(?![#\\w]).*")) {
                return r;
            }
        }
        return -1;
    }

    /** The handle of an asynchronous call: per replica, the event after which it holds the average. */
    public record EventHandle(SyncBackend backend, List<? extends Device> devices, DeviceEvent[] done) implements SyncHandle {
        @Override
        public void await() {
            for (int r = 0; r < done.length; r++) {
                try {
                    done[r].synchronize();
                } catch (RuntimeException e) {
                    int named = failedReplica(devices, e); // a schedule that forks from one stream fails on that one
                    int at = named >= 0 ? named : r;
                    throw new SyncFailedException(backend, at, devices.get(at).id(), e);
                }
            }
        }

        @Override
        public boolean isDone() {
            return allDone(done);
        }
    }

    /** Whether every event has completed; a failed query counts as done (the handle's await reports it). */
    public static boolean allDone(DeviceEvent[] events) {
        for (DeviceEvent e : events) {
            try {
                if (!e.isDone()) {
                    return false;
                }
            } catch (RuntimeException failed) {
                return true;
            }
        }
        return true;
    }
}
