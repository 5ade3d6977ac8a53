package io.gradsync.sync.backend.wire;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.SyncStats;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.CollectiveCalls;
import io.gradsync.sync.backend.LocalHandles;
import io.gradsync.sync.backend.ReplicaCheck;
import io.gradsync.sync.backend.Resources;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import java.util.ArrayList;
import java.util.List;

/**
 * fp32 gradients sent as 16-bit values, around any backend (PyTorch DDP's bf16 and fp16 compress
 * hooks): on each replica's own device its fp32 gradients are rounded to the wire type (to nearest
 * even) into scratch, the backend averages (or reduce-scatters) those 16-bit values as it averages
 * any gradient of that type, and the result is widened back into the fp32 gradients, exactly
 * (a reduce-scatter's only on the replica's shard). Every byte the backend moves is then half as
 * many; what it costs is the rounding of each input and of the average to the wire type.
 *
 * <p>The conversions run on a stream of this synchronizer's per device, ordered after the caller's
 * work as the backends order theirs (the caller's stream, else the whole device unless
 * {@code waitForCaller} is off); the backend is handed replicas on those streams, so that it runs
 * between the two conversions without a host wait, and the caller's streams wait for the end.
 * 16-bit gradients, all-gathers and broadcasts (parameters, which must arrive exact) go to the
 * backend as they are.
 *
 * <p>Thread-safety: calls are serialized on the synchronizer, as the backends' are.
 */
public final class WireSynchronizer extends CollectiveCalls {
    private final GradientSynchronizer inner;
    private final DType wire;
    private final List<? extends Device> devices;
    /** The replica set last checked: a loop's same replicas are checked again only for what can change. */
    private final ReplicaCheck.Memo replicasChecked = new ReplicaCheck.Memo();
    private final boolean waitForCaller;
    private final DeviceStream[] streams;
    private final DeviceEvent[] ready;
    private final DeviceEvent[] done;
    private final WireLayouts layouts;
    private boolean closed;

    /**
     * @param inner         the backend, made for {@code devices}; closed with this synchronizer
     * @param wire          {@code BF16} or {@code FP16}
     * @param waitForCaller as {@link io.gradsync.sync.SyncOptions#waitForCaller()}
     */
    public WireSynchronizer(GradientSynchronizer inner, DType wire, List<? extends Device> devices, boolean waitForCaller) {
        if (wire == DType.FP32) {
            throw new IllegalArgumentException("wire type fp32 compresses nothing: use the backend itself");
        }
        this.inner = inner;
        this.wire = wire;
        this.devices = List.copyOf(devices);
        this.waitForCaller = waitForCaller;
        int n = devices.size();
        streams = new DeviceStream[n];
        ready = new DeviceEvent[n];
        done = new DeviceEvent[n];
        try {
            for (int r = 0; r < n; r++) {
                streams[r] = devices.get(r).createStream();
                ready[r] = devices.get(r).createUntimedEvent();
                done[r] = devices.get(r).createUntimedEvent();
            }
        } catch (RuntimeException e) {
            releaseStreams();
            throw e;
        }
        layouts = new WireLayouts(this.devices, streams, wire);
    }

    /** The type fp32 gradients cross between replicas as. */
    public DType wire() {
        return wire;
    }

    @Override
    public SyncBackend backend() {
        return inner.backend();
    }

    @Override
    public int localRank() {
        return inner.localRank();
    }

    @Override
    public int rank() {
        return inner.rank();
    }

    @Override
    public int worldSize() {
        return inner.worldSize();
    }

    @Override
    protected void call(List<Replica> replicas, Collective op) {
        call(replicas, op, false).await();
    }

    @Override
    protected SyncHandle callAsync(List<Replica> replicas, Collective op) {
        return call(replicas, op, true);
    }

    /**
     * An average or reduce-scatter: narrows, hands the scratch replicas to the backend, widens
     * back; the copy collectives go to the backend as they are. Returns what to wait on.
     */
    private synchronized SyncHandle call(List<Replica> replicas, Collective op, boolean async) {
        checkOpen();
        WireLayouts.Layout l = null;
        if (op.sums() && worldSize() > 1) { // one replica: nothing crosses a wire, so nothing is rounded
            replicasChecked.check(replicas, devices);
            l = layouts.of(replicas, op, rank(), worldSize()); // null where no gradient is fp32
        }
        if (l == null) {
            return inner(replicas, op, async);
        }
        int n = devices.size();
        for (int r = 0; r < n; r++) {
            DeviceStream caller = replicas.get(r).stream();
            if (caller != null) {
                caller.record(ready[r]); // the caller's work on the gradients comes first
                streams[r].waitFor(ready[r]);
            } else if (waitForCaller) {
                devices.get(r).synchronize();
            }
            l.narrow(r);
        }
        List<Replica> onWire = l.onWire();
        SyncHandle backend = inner(onWire, op, async);
        for (int r = 0; r < n; r++) {
            l.widen(r); // on the stream the backend's work was ordered on: after it
            streams[r].record(done[r]);
            DeviceStream caller = replicas.get(r).stream();
            if (caller != null) {
                caller.waitFor(done[r]); // the caller's next work runs after the widened average
            }
        }
        DeviceEvent[] events = done.clone();
        return new SyncHandle() {
            @Override
            public void await() {
                backend.await();
                new LocalHandles.EventHandle(inner.backend(), devices, events).await();
            }

            @Override
            public boolean isDone() {
                return backend.isDone() && LocalHandles.allDone(events);
            }
        };
    }

    /** {@code op} on the backend itself: queued ({@code async}), or done when this returns. */
    private SyncHandle inner(List<Replica> replicas, Collective op, boolean async) {
        if (async) {
            return switch (op.kind()) {
                case ALL_REDUCE -> inner.synchronizeAsync(replicas);
                case REDUCE_SCATTER -> inner.reduceScatterAsync(replicas);
                case ALL_GATHER -> inner.allGatherAsync(replicas);
                case BROADCAST -> inner.broadcastAsync(replicas, op.root());
            };
        }
        switch (op.kind()) {
            case ALL_REDUCE -> inner.synchronize(replicas);
            case REDUCE_SCATTER -> inner.reduceScatter(replicas);
            case ALL_GATHER -> inner.allGather(replicas);
            case BROADCAST -> inner.broadcast(replicas, op.root());
        }
        return SyncHandle.done();
    }

    @Override
    public SyncStats stats() {
        return inner.stats();
    }

    @Override
    public synchronized void barrier() {
        checkOpen();
        inner.barrier();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(inner.backend().label() + " synchronizer (" + wire.label() + " wire) is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            releaseStreams();
            layouts.close();
        } finally {
            inner.close();
        }
    }

    private void releaseStreams() {
        List<RuntimeException> failures = new ArrayList<>();
        for (DeviceStream s : streams) {
            if (s != null) {
                try {
                    s.synchronize();
                } catch (RuntimeException e) {
                    failures.add(e);
                }
                Resources.closeQuietly(s);
            }
        }
        for (DeviceEvent[] events : new DeviceEvent[][] {ready, done}) {
            for (DeviceEvent e : events) {
                Resources.closeQuietly(e);
            }
        }
        if (!failures.isEmpty()) {
            throw failures.getFirst();
        }
    }
}
