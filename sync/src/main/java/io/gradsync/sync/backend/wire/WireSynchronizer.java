package io.gradsync.sync.backend.wire;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.SyncStats;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.CallFailures;
import io.gradsync.sync.backend.CollectiveCalls;
import io.gradsync.sync.backend.LocalHandles;
import io.gradsync.sync.backend.ReplicaCheck;
import io.gradsync.sync.backend.Resources;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * fp32 gradients sent as 16-bit values, around any backend (PyTorch DDP's bf16 and fp16 compress
 * hooks): on each replica's own device its fp32 gradients are rounded to the wire type (to nearest
 * even) into scratch, the backend averages (or reduce-scatters) those 16-bit values as it averages
 * any gradient of that type, and the result is widened back into the fp32 gradients, exactly
 * (a reduce-scatter's only on the replica's shard). Every byte the backend moves is then half as
 * many; what it costs is the rounding of each input and of the average to the wire type.
 *
 * <p>The conversions run on streams of this synchronizer's per device, ordered after the caller's
 * work as the backends order theirs (the caller's stream, else the whole device unless
 * {@code waitForCaller} is off); the backend is handed replicas on such streams, so that it runs
 * between the two conversions without a host wait, and the caller's streams wait for the end.
 * On {@code nccl} an average of more than 16 MiB of wire bytes ({@link #STAGE_BYTES_PROPERTY})
 * goes to the backend in stages of that many, each an asynchronous call of its own: rounding,
 * transfer and widening run on three streams per device, so that NCCL's transfer of one stage
 * hides the conversions of the others (passes over the fp32 gradients that would otherwise come
 * before and after every byte moved). Every element's result is the same as unstaged on the
 * backends that define the wire's bits. The other backends are not staged by default: on JVM
 * devices the conversions and the transfers share the same cores, and staging measured slower.
 * 16-bit gradients, all-gathers and broadcasts (parameters, which must arrive exact) go to the
 * backend as they are.
 *
 * <p>Thread-safety: calls are serialized on the synchronizer, as the backends' are.
 */
public final class WireSynchronizer extends CollectiveCalls {
    /** System property: the wire bytes of one stage of a large average (default: 16 MiB on nccl, 0 elsewhere); 0 hands every average over whole. */
    public static final String STAGE_BYTES_PROPERTY = "gradsync.wire.stageBytes";
    private static final long DEFAULT_STAGE_BYTES = 16L << 20;

    private final GradientSynchronizer inner;
    private final DType wire;
    private final List<? extends Device> devices;
    /** The replica set last checked: a loop's same replicas are checked again only for what can change. */
    private final ReplicaCheck.Memo replicasChecked = new ReplicaCheck.Memo();
    private final boolean waitForCaller;
    private final DeviceStream[] streams;
    /** Per device, the streams a staged average's backend calls and widenings are queued on. */
    private final DeviceStream[] transfers;
    private final DeviceStream[] widenings;
    private final DeviceEvent[] ready;
    private final DeviceEvent[] done;
    /** Per stage and device, the events after its rounding and after its transfer (grown as stages are). */
    private DeviceEvent[][] rounded = new DeviceEvent[0][];
    private DeviceEvent[][] moved = new DeviceEvent[0][];
    /** Whether the last call was staged: its widening ran on another stream than the next rounding. */
    private boolean lastStaged;
    /** The backend calls the last call made: its stages, 1 unstaged. */
    private volatile int lastStages;
    private final WireLayouts layouts;
    private boolean closed;
    /** Whether this counts the calls in the backend's stats (the backend's own calls, a stage each, are not counted). */
    private final boolean counts;
    /** Which call's failure reached the caller ({@link #close} reports the last call's once). */
    private final CallFailures failures = new CallFailures();

    /**
     * @param inner         the backend, made for {@code devices}; closed with this synchronizer
     * @param wire          {@code BF16} or {@code FP16}
     * @param waitForCaller as {@link io.gradsync.sync.SyncOptions#waitForCaller()}
     */
    public WireSynchronizer(GradientSynchronizer inner, DType wire, List<? extends Device> devices, boolean waitForCaller) {
        this(inner, wire, devices, waitForCaller,
                Long.getLong(STAGE_BYTES_PROPERTY, inner.backend() == SyncBackend.NCCL ? DEFAULT_STAGE_BYTES : 0));
    }

    /**
     * As {@link #WireSynchronizer(GradientSynchronizer, DType, List, boolean)}, with the stage size
     * given.
     *
     * @param stageBytes an average of more wire bytes than this goes to the backend in stages of this many; 0: never staged
     */
    public WireSynchronizer(GradientSynchronizer inner, DType wire, List<? extends Device> devices, boolean waitForCaller, long stageBytes) {
        if (wire == DType.FP32) {
            throw new IllegalArgumentException("wire type fp32 compresses nothing: use the backend itself");
        }
        if (stageBytes < 0) {
            throw new IllegalArgumentException("stageBytes must be >= 0 (0: never staged), got " + stageBytes);
        }
        this.inner = inner;
        this.wire = wire;
        this.devices = List.copyOf(devices);
        this.waitForCaller = waitForCaller;
        int n = devices.size();
        streams = new DeviceStream[n];
        transfers = new DeviceStream[n];
        widenings = new DeviceStream[n];
        ready = new DeviceEvent[n];
        done = new DeviceEvent[n];
        try {
            for (int r = 0; r < n; r++) {
                streams[r] = devices.get(r).createStream();
                transfers[r] = devices.get(r).createStream();
                widenings[r] = devices.get(r).createStream();
                ready[r] = devices.get(r).createUntimedEvent();
                done[r] = devices.get(r).createUntimedEvent();
            }
        } catch (RuntimeException e) {
            releaseStreams();
            throw e;
        }
        layouts = new WireLayouts(this.devices, streams, transfers, wire, stageBytes);
        if (inner instanceof CollectiveCalls calls) {
            calls.leaveCallCountingToWrapper();
            counts = true;
        } else {
            counts = false;
        }
    }

    /** How many calls of the backend the last call made: its stages (1 where it was not staged); the stats count it once. */
    public int lastStages() {
        return lastStages;
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
        long t0 = System.nanoTime();
        long call = failures.begin();
        try {
            call(replicas, op, false).await();
        } catch (RuntimeException e) {
            throw failures.thrown(call, e);
        }
        counted(replicas, t0);
    }

    @Override
    protected SyncHandle callAsync(List<Replica> replicas, Collective op) {
        long t0 = System.nanoTime();
        long call = failures.begin();
        SyncHandle h;
        try {
            h = failures.asynchronous(call, call(replicas, op, true));
        } catch (RuntimeException e) {
            throw failures.thrown(call, e);
        }
        counted(replicas, t0);
        return h;
    }

    /** One call of the caller's replicas in the stats, however many calls of the backend it made. */
    private void counted(List<Replica> replicas, long t0) {
        if (counts) {
            countCall(inner.stats(), bytesOf(replicas), System.nanoTime() - t0);
        }
    }

    /**
     * An average or reduce-scatter: narrows, hands the scratch replicas to the backend, widens
     * back (in stages where the layout has them); the copy collectives go to the backend as they
     * are. Returns what to wait on.
     */
    private synchronized SyncHandle call(List<Replica> replicas, Collective op, boolean async) {
        checkOpen();
        WireLayouts.Layout l = null;
        if (op.sums() && worldSize() > 1) { // one replica: nothing crosses a wire, so nothing is rounded
            replicasChecked.check(replicas, devices);
            l = layouts.of(replicas, op, rank(), worldSize()); // null where no gradient is fp32
        }
        if (l == null) {
            lastStages = 1;
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
            if (lastStaged) {
                streams[r].waitFor(done[r]); // the last call's widening, on another stream, reads the scratch
            }
        }
        List<WireLayouts.Stage> stages = l.stages();
        lastStaged = stages.size() > 1;
        lastStages = stages.size();
        List<SyncHandle> calls = lastStaged ? staged(stages, op) : List.of(whole(stages.getFirst(), op, async));
        for (int r = 0; r < n; r++) {
            DeviceStream caller = replicas.get(r).stream();
            if (caller != null) {
                caller.waitFor(done[r]); // the caller's next work runs after the widened average
            }
        }
        DeviceEvent[] events = done.clone();
        return new SyncHandle() {
            @Override
            public void await() {
                RuntimeException failure = null;
                for (SyncHandle call : calls) {
                    try {
                        call.await();
                    } catch (RuntimeException e) {
                        failure = failure == null ? e : failure;
                    }
                }
                if (failure != null) {
                    throw failure;
                }
                new LocalHandles.EventHandle(inner.backend(), devices, events).await();
            }

            @Override
            public boolean isDone() {
                return calls.stream().allMatch(SyncHandle::isDone) && LocalHandles.allDone(events);
            }
        };
    }

    /** One stage, on the conversion streams: rounding, the backend, widening, in one queue per device. */
    private SyncHandle whole(WireLayouts.Stage stage, Collective op, boolean async) {
        for (int r = 0; r < devices.size(); r++) {
            stage.narrow(r, streams[r]);
        }
        SyncHandle backend = inner(stage.onWire(), op, async);
        for (int r = 0; r < devices.size(); r++) {
            stage.widen(r, streams[r]); // on the stream the backend's work was ordered on: after it
            streams[r].record(done[r]);
        }
        return backend;
    }

    /**
     * Stages on three streams per device: every rounding queued at once, then every stage's
     * backend call after its rounding, then every widening after its stage's call. Where a
     * backend call is refused, the stages queued before it are waited for and nothing is widened.
     */
    private List<SyncHandle> staged(List<WireLayouts.Stage> stages, Collective op) {
        int n = devices.size();
        reserveStageEvents(stages.size());
        for (int s = 0; s < stages.size(); s++) {
            for (int r = 0; r < n; r++) {
                stages.get(s).narrow(r, streams[r]);
                streams[r].record(rounded[s][r]);
            }
        }
        List<SyncHandle> calls = new ArrayList<>();
        try {
            for (int s = 0; s < stages.size(); s++) {
                for (int r = 0; r < n; r++) {
                    transfers[r].waitFor(rounded[s][r]);
                }
                calls.add(inner(stages.get(s).onWire(), op, true));
                for (int r = 0; r < n; r++) {
                    transfers[r].record(moved[s][r]);
                }
            }
        } catch (RuntimeException e) {
            for (SyncHandle queued : calls) {
                try {
                    queued.await();
                } catch (RuntimeException again) {
                    e.addSuppressed(again);
                }
            }
            for (int r = 0; r < n; r++) {
                streams[r].record(done[r]);
            }
            throw e;
        }
        for (int s = 0; s < stages.size(); s++) {
            for (int r = 0; r < n; r++) {
                widenings[r].waitFor(moved[s][r]);
                stages.get(s).widen(r, widenings[r]);
            }
        }
        for (int r = 0; r < n; r++) {
            widenings[r].record(done[r]);
        }
        return calls;
    }

    /** Per stage and device, the two events a staged call records: grown to {@code count} stages. */
    private void reserveStageEvents(int count) {
        int have = rounded.length;
        if (have >= count) {
            return;
        }
        rounded = Arrays.copyOf(rounded, count);
        moved = Arrays.copyOf(moved, count);
        for (int s = have; s < count; s++) {
            rounded[s] = new DeviceEvent[devices.size()];
            moved[s] = new DeviceEvent[devices.size()];
            for (int r = 0; r < devices.size(); r++) {
                rounded[s][r] = devices.get(r).createUntimedEvent();
                moved[s][r] = devices.get(r).createUntimedEvent();
            }
        }
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

    /**
     * Waits for the last call, then frees the streams and scratch and closes the backend. As the
     * backends' close: a failure of the last call that reached no caller is thrown, one that did
     * is not thrown again (the streams that failed report it once more when drained).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException unreported = failures.unreported();
        boolean quiet = unreported != null || failures.lastReported();
        try {
            releaseStreams();
            layouts.close();
        } catch (RuntimeException e) {
            if (!quiet) {
                throw e;
            }
        } finally {
            inner.close();
        }
        if (unreported != null) {
            throw unreported;
        }
    }

    private static List<DeviceStream> concat(DeviceStream[]... all) {
        List<DeviceStream> out = new ArrayList<>();
        for (DeviceStream[] some : all) {
            out.addAll(Arrays.asList(some));
        }
        return out;
    }

    private void releaseStreams() {
        List<RuntimeException> failures = new ArrayList<>();
        for (DeviceStream s : concat(streams, transfers, widenings)) {
            if (s != null) {
                try {
                    s.synchronize();
                } catch (RuntimeException e) {
                    failures.add(e);
                }
                Resources.closeQuietly(s);
            }
        }
        List<DeviceEvent[]> events = new ArrayList<>(List.of(ready, done));
        events.addAll(List.of(rounded));
        events.addAll(List.of(moved));
        for (DeviceEvent[] row : events) {
            for (DeviceEvent e : row) {
                Resources.closeQuietly(e);
            }
        }
        if (!failures.isEmpty()) {
            throw failures.getFirst();
        }
    }
}
