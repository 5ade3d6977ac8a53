package io.gradsync.sync.backend;

import io.gradsync.sync.FusedSumOfSquares;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncFailedException;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.SyncStats;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostFlag;
import java.util.Arrays;
import java.util.concurrent.Future;
import java.util.List;

/**
 * What the single-process synchronizers share: one replica per local device, ranks all 0, the
 * input check before anything moves, ordering against the caller's work (its streams, or the whole
 * device), the synchronous and asynchronous forms of every collective, per-call stats, and
 * close-once. Subclasses implement {@link #perform} (called only with checked input and more than
 * one replica) and {@link #release}.
 *
 * <p>Thread-safety: calls are serialized on the synchronizer; handles may be awaited from any thread.
 *
 * @param <D> the device type the backend works on
 */
public abstract class LocalSynchronizer<D extends Device> extends CollectiveCalls {
    protected final List<D> devices;
    /** The replica set last checked: a loop's same replicas are checked again only for what can change. */
    private final ReplicaCheck.Memo replicasChecked = new ReplicaCheck.Memo();
    protected final SyncStats stats = new SyncStats();
    private volatile boolean closed;
    /** The caller's work before each call's ({@link #awaitCallerWork}). */
    private final CallerWork callerWork;
    /** The completion of the last asynchronous call, until a later call has seen it finish. */
    private DeviceEvent[] pending;
    /** Host-averaging backends: their background calls (made on first use). */
    private HostCalls onHost;
    /** Which call's failure reached the caller ({@link #close} reports the last call's once). */
    private final CallFailures failures = new CallFailures();

    /** @param waitForCaller {@link SyncOptions#waitForCaller()} */
    protected LocalSynchronizer(List<? extends D> devices, boolean waitForCaller) {
        this.devices = List.copyOf(devices);
        this.callerWork = new CallerWork(this.devices, waitForCaller);
    }

    /**
     * The caller's work on the gradients comes first. {@code starts[r]} (one of the backend's
     * streams of device r, or null) begins the backend's work on replica r: where the replica
     * names a stream, it waits for an event recorded on that stream now; elsewhere the whole device
     * is waited for (unless told not to).
     */
    protected final void awaitCallerWork(DeviceStream... starts) {
        callerWork.await(starts);
    }

    /**
     * The caller's work on the gradients comes first, for work the host does itself: each replica's
     * stream waited for here up to now, elsewhere the whole device (unless told not to).
     */
    protected final void awaitCallerWorkOnHost() {
        callerWork.awaitOnHost();
    }

    /**
     * As {@link #awaitCallerWork(DeviceStream...)} for a backend whose work starts on one stream
     * and reads every replica from there: {@code start} waits for every caller stream's event.
     */
    protected final void awaitCallerWorkOn(DeviceStream start) {
        callerWork.awaitOn(start);
    }

    /**
     * For a backend whose recorded schedule waits for the caller's work itself: the events it waits
     * for (one per replica, made now where missing; see {@link #markCallerWork}).
     */
    protected final DeviceEvent[] callerReadyEvents() {
        return callerWork.readyEvents();
    }

    /** Marks each replica's caller stream now on its {@link #callerReadyEvents} event (no stream: waits for the device where asked). */
    protected final void markCallerWork() {
        callerWork.mark();
    }

    @Override
    public final int localRank() {
        return 0;
    }

    @Override
    public final int rank() {
        return 0;
    }

    @Override
    public final int worldSize() {
        return devices.size();
    }

    @Override
    public final SyncStats stats() {
        return stats;
    }

    /** The synchronous form of every collective: queued as {@link #callAsync} queues it, then waited for. */
    @Override
    protected final synchronized void call(List<Replica> replicas, Collective op) {
        long t0 = System.nanoTime();
        accept(replicas);
        long call = failures.begin();
        try {
            DeviceEvent[] done = queue(replicas, op);
            if (done != null) {
                long t1 = System.nanoTime();
                for (DeviceEvent e : distinct(done)) {
                    e.synchronize();
                }
                stats.phase("wait", System.nanoTime() - t1);
            }
        } catch (RuntimeException e) {
            throw failures.thrown(call, failed(e));
        }
        countCall(stats, bytesOf(replicas), System.nanoTime() - t0);
    }

    /**
     * A failure of an accepted call, as its asynchronous form reports it: a {@link SyncFailedException}
     * naming the replica whose device failed (the caller's work queued before the call included).
     * Refusals of the input before anything moved, and an interrupt, stay what they are.
     */
    private RuntimeException failed(RuntimeException e) {
        if (e instanceof IllegalArgumentException || e instanceof SyncFailedException || CallFailures.interrupted(e)) {
            return e;
        }
        int r = LocalHandles.failedReplica(devices, e);
        return new SyncFailedException(backend(), r, r < 0 ? null : devices.get(r).id(), e);
    }

    /**
     * Queues the collective and returns. Replicas with a stream have their later work ordered
     * after it; the others must {@link SyncHandle#await()} before touching their gradients. Input
     * errors throw here, before anything moves, as in {@link #synchronize}.
     */
    @Override
    protected final synchronized SyncHandle callAsync(List<Replica> replicas, Collective op) {
        if (averagesOnHost() && devices.size() > 1) {
            SyncHandle h = startOnHost(replicas, op);
            if (h != null) {
                return h;
            }
        }
        long t0 = System.nanoTime();
        accept(replicas);
        long call = failures.begin();
        DeviceEvent[] done;
        try {
            done = queue(replicas, op);
        } catch (RuntimeException e) { // as the synchronous form reports a failure while queuing
            throw failures.thrown(call, failed(e));
        }
        countCall(stats, bytesOf(replicas), System.nanoTime() - t0);
        if (done == null) {
            return SyncHandle.done();
        }
        pending = done;
        return failures.asynchronous(call, new LocalHandles.EventHandle(backend(), devices, done));
    }

    /**
     * A host-averaging backend's asynchronous call. Where a replica names a stream, every copy the
     * call needs is queued now, on the calling thread, gated by host flags that the background
     * sums raise ({@link #queueAhead}): work that the flags' release depends on is then never queued
     * behind a wait for them (streams share the GPU's hardware queues, so a wait can hold up another
     * stream's later work), and the caller's streams wait for events of copies already queued.
     * Without streams the whole call runs on a background thread, nothing waiting on the device.
     * Returns null where some device has no host flags: the caller then gets the synchronous form.
     */
    private SyncHandle startOnHost(List<Replica> replicas, Collective op) {
        checkOpen();
        replicasChecked.check(replicas, devices);
        HostCalls host = onHost();
        host.awaitPending();
        long call = failures.begin();
        boolean streams = replicas.stream().anyMatch(r -> r.stream() != null);
        long t0 = System.nanoTime();
        Runnable background;
        if (streams) {
            HostFlag[] flags = host.flags();
            if (flags == null) {
                return null;
            }
            Ahead ahead;
            callerWork.begin(replicas);
            try {
                ahead = queueAhead(replicas, flags, op);
            } finally {
                callerWork.end();
            }
            if (ahead.done() != null) {
                for (int r = 0; r < replicas.size(); r++) {
                    DeviceStream caller = replicas.get(r).stream();
                    if (caller != null) {
                        caller.waitFor(ahead.done()[r]); // the caller's next work runs after the last copy back
                    }
                }
            }
            background = () -> {
                ahead.background().run();
                if (ahead.done() != null) {
                    for (DeviceEvent e : distinct(ahead.done())) {
                        e.synchronize();
                    }
                }
            };
        } else {
            background = () -> {
                callerWork.begin(replicas);
                try {
                    DeviceEvent[] done = perform(replicas, op);
                    if (done != null) {
                        for (DeviceEvent e : distinct(done)) {
                            e.synchronize();
                        }
                    }
                } finally {
                    callerWork.end();
                }
            };
        }
        Future<?> f = host.submit(() -> {
            background.run();
            countCall(stats, bytesOf(replicas), System.nanoTime() - t0);
        });
        return failures.asynchronous(call, new LocalHandles.FutureHandle(backend(), devices, f));
    }

    private HostCalls onHost() {
        if (onHost == null) {
            onHost = new HostCalls(devices, backend().label());
        }
        return onHost;
    }

    /**
     * What {@link #queueAhead} leaves: per replica the event after its last copy back (null when
     * nothing was queued whole), and the host's part, to run on the background thread (it throws
     * what failed, the queueing's failure included, once no device waits on the flags any more).
     */
    public record Ahead(DeviceEvent[] done, Runnable background) {
    }

    /**
     * Host-averaging backends ({@link #averagesOnHost}): queues all of a call's device work now,
     * after {@link #awaitCallerWork}, the waits on {@code flags} (one per device) placed only
     * behind the work their release needs.
     */
    protected Ahead queueAhead(List<Replica> replicas, HostFlag[] flags, Collective op) {
        throw new UnsupportedOperationException(backend().label() + " averages on the devices");
    }

    /** Waits for the background call in flight, if any. */
    private void awaitPendingOnHost() {
        if (onHost != null) {
            onHost.awaitPending();
        }
    }

    /** True for backends that average on the host ({@code cpu}): their asynchronous form runs in the background. */
    protected boolean averagesOnHost() {
        return false;
    }

    /** Refuses a closed synchronizer and replicas that do not fit, before anything moves. */
    private void accept(List<Replica> replicas) {
        checkOpen();
        replicasChecked.check(replicas, devices);
    }

    /** After {@link #accept}: orders after the last asynchronous call where the backend does not, queues {@code op}; returns the completion or null. */
    private DeviceEvent[] queue(List<Replica> replicas, Collective op) {
        if (devices.size() < 2) {
            return null;
        }
        awaitPendingOnHost();
        if (pending != null && !ordersCallsItself()) {
            for (DeviceEvent e : distinct(pending)) {
                e.synchronize(); // a failure there belongs to that call's handle, but it also stops this one
            }
        }
        pending = null;
        callerWork.begin(replicas);
        try {
            DeviceEvent[] done = perform(replicas, op);
            if (done != null) {
                for (int r = 0; r < replicas.size(); r++) {
                    DeviceStream caller = replicas.get(r).stream();
                    if (caller != null) {
                        caller.waitFor(done[r]); // the caller's next work runs after the collective
                    }
                }
            }
            return done;
        } finally {
            callerWork.end();
        }
    }

    private static DeviceEvent[] distinct(DeviceEvent[] events) {
        return Arrays.stream(events).distinct().toArray(DeviceEvent[]::new);
    }

    /**
     * True when a call's work on the backend's streams is ordered after the previous call's
     * without a host wait (all of it starts behind the previous call's end on one stream).
     */
    protected boolean ordersCallsItself() {
        return false;
    }

    /**
     * True during a call made by {@link #synchronizeCollecting}: backends that fuse the sums of
     * squares into their averaging pass ({@link FusedSumOfSquares}) collect them then.
     */
    protected boolean collect;

    /**
     * For {@link FusedSumOfSquares} backends: one call with {@link #collect} set, then the per-gradient
     * sums {@code read} takes from what the call left.
     */
    protected final synchronized double[] synchronizeCollecting(List<Replica> replicas,
            java.util.function.Function<List<Replica>, double[]> read) {
        if (devices.size() < 2) {
            throw new UnsupportedOperationException("one replica: nothing is averaged, so there is no pass to fuse the sum into");
        }
        collect = true;
        try {
            synchronize(replicas);
            return read.apply(replicas);
        } finally {
            collect = false;
        }
    }

    /**
     * Queues {@code op} on checked replicas (one per device, at least two) in place, after
     * {@link #awaitCallerWork} (which it calls before touching the gradients), and returns per
     * replica the event after which that replica holds its result and the backend is done with
     * it; or null when it waited for everything itself. {@link #collect} is set only with
     * {@link Collective#AVERAGE}.
     */
    protected abstract DeviceEvent[] perform(List<Replica> replicas, Collective op);

    /** Single process: every replica is here, so waiting for the devices is the barrier. */
    @Override
    public void barrier() {
        checkOpen();
        for (Device d : devices) {
            d.synchronize();
        }
    }

    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException(backend().label() + " synchronizer is closed");
        }
    }

    /**
     * Waits for the last call, frees everything, and throws a device failure found on the way
     * unless the last call's failure already reached the caller (the devices' failed work reports
     * itself again on every later wait).
     */
    @Override
    public final synchronized void close() {
        if (!closed) {
            awaitPendingOnHost();
            closed = true;
            RuntimeException unreported = failures.unreported();
            try {
                if (onHost != null) {
                    onHost.shutdown();
                }
                release();
            } catch (RuntimeException e) {
                if (unreported == null && !failures.lastReported()) {
                    throw e;
                }
            } finally {
                callerWork.close();
                if (onHost != null) {
                    onHost.closeFlags();
                }
            }
            if (unreported != null) {
                throw unreported;
            }
        }
    }

    /** Frees streams, events and staging memory; called once. */
    protected abstract void release();
}
