package io.gradsync.sync.backend.nccl;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncFailedException;
import io.gradsync.sync.SyncTimeoutException;
import io.gradsync.sync.SyncHandle;
import io.gradsync.sync.NcclOptions;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.SyncStats;
import io.gradsync.sync.backend.CallFailures;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.CollectiveCalls;
import io.gradsync.sync.backend.LocalHandles;
import io.gradsync.sync.backend.ReplicaCheck;
import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclComm;
import io.gradsync.nccl.NcclDataType;
import io.gradsync.nccl.NcclRedOp;
import io.gradsync.nccl.NcclUniqueId;
import io.gradsync.sync.nccl.rendezvous.Rendezvous;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.Device;
import java.util.ArrayDeque;
import java.util.List;

/**
 * NCCL's all-reduce with {@code ncclAvg}, and the broadcast, reduce-scatter and all-gather
 * ({@link NcclCalls} says which NCCL calls each makes), in place, in one of two shapes:
 * <ul>
 * <li>one process, every local GPU: one communicator per device ({@code ncclCommInitAll}), all
 * calls of a step in one NCCL group;</li>
 * <li>one process per GPU (torchrun style): rank 0 serves the unique id ({@link Rendezvous}), every
 * rank joins with {@code ncclCommInitRank} on its one device; across hosts NCCL picks its network
 * transport by itself. Before a collective the ranks compare the collective (a broadcast's root
 * too) and their gradient layouts with a tiny all-reduce, so that a mismatch fails with a message
 * instead of a hang or garbage.</li>
 * </ul>
 * Gradients that lie back to back in one buffer on every local replica go as one call (not for the
 * sharded collectives: shards are per gradient). Each call waits for the caller's work on the
 * devices first, and returns once every replica holds its result. With one replica in all, the
 * broadcast, reduce-scatter and all-gather leave it as it is without calling NCCL. A reduce-scatter's
 * shard holds what {@code ncclAvg} gives there, which may differ from the average's in the last bit
 * (NCCL's algorithms sum in their own orders); copies are bit for bit. Waiting polls the streams and the communicators' asynchronous errors; past
 * {@link SyncOptions#timeout()} (or on an NCCL error) the communicators are aborted and the call
 * throws, naming ranks, devices and time. After that the synchronizer is unusable.
 *
 * <p>This class coordinates a call (check, order after the caller, agree, launch, wait, stats) and
 * the barrier and close; its parts do one job each: {@link NcclComms} the communicators and each
 * device's context, stream, events and scratch, {@link NcclPlan} what a replica set turns into,
 * {@link NcclCalls} the NCCL calls of each collective on it, {@link NcclLayoutCheck} the agreement on it across ranks, {@link NcclWatch} waiting, timeouts and
 * the abort.
 *
 * <p>Thread-safety: calls, the barrier, close and a handle's wait are serialized on the
 * synchronizer; only the watchdog's abort runs beside them ({@link NcclWatch}).
 */
final class NcclSynchronizer extends CollectiveCalls {
    /** The replica set last checked: a loop's same replicas are checked again only for what can change. */
    private final ReplicaCheck.Memo replicasChecked = new ReplicaCheck.Memo();
    private final NcclComms nccl;
    private final NcclWatch watch;
    private final NcclLayoutCheck layoutCheck;
    private final long timeoutNanos;
    private final NcclOptions options;
    private final boolean waitForCaller;
    private final SyncStats stats = new SyncStats();
    /** The plans of the last calls' layouts, most recent first (a staged wire alternates between a few). */
    private final ArrayDeque<NcclPlan> plans = new ArrayDeque<>();
    private static final int PLANS_KEPT = 16;
    /** Whether the last call's failure reached its caller: close waits for a dropped handle's call. */
    private final CallFailures failures = new CallFailures();
    private volatile boolean closed;

    /** One process driving every device in {@code devices}. */
    static NcclSynchronizer singleProcess(List<CudaDevice> devices, NcclOptions options, boolean waitForCaller) {
        int[] ordinals = devices.stream().mapToInt(Device::ordinal).toArray();
        List<NcclComm> comms = Nccl.initAll(ordinals);
        return new NcclSynchronizer(devices, comms, 0, devices.size(), 0, false, options, waitForCaller);
    }

    /** One rank of a multi-process job, on {@code device}. */
    static NcclSynchronizer multiProcess(CudaDevice device, RendezvousConfig config, NcclOptions options,
            boolean waitForCaller) {
        NcclUniqueId id = Rendezvous.exchange(config, options.timeout(), Nccl::newUniqueId);
        NcclComm comm = NcclComms.initRankWithin(device, config, id, options);
        return new NcclSynchronizer(List.of(device), List.of(comm), config.rank(), config.worldSize(), config.localRank(),
                true, options, waitForCaller);
    }

    private NcclSynchronizer(List<CudaDevice> devices, List<NcclComm> comms, int rank, int worldSize, int localRank,
            boolean multiProcess, NcclOptions options, boolean waitForCaller) {
        this.options = options;
        this.waitForCaller = waitForCaller;
        this.timeoutNanos = options.timeout().toNanos();
        this.nccl = new NcclComms(devices, comms, rank, worldSize, localRank, multiProcess);
        this.watch = new NcclWatch(nccl, timeoutNanos);
        this.layoutCheck = new NcclLayoutCheck(nccl, watch, options);
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.NCCL;
    }

    @Override
    public int localRank() {
        return nccl.localRank;
    }

    @Override
    public int rank() {
        return nccl.rank;
    }

    @Override
    public int worldSize() {
        return nccl.worldSize;
    }

    /** Every collective's synchronous form: queued as {@link #callAsync} queues it, then waited for. */
    @Override
    protected synchronized void call(List<Replica> replicas, Collective c) {
        long call = failures.begin();
        try {
            Launched l = start(replicas, c, false);
            if (l != null) {
                try {
                    watch.await(l.what, l.start, l.deadline);
                } catch (RuntimeException e) {
                    throw failed(e);
                }
                finish(l);
            }
        } catch (RuntimeException e) {
            throw failures.thrown(call, e);
        }
    }

    /**
     * Queues the collective and returns. With several processes the layout check before it (on by
     * default) still waits for the other ranks on the host.
     */
    @Override
    protected synchronized SyncHandle callAsync(List<Replica> replicas, Collective c) {
        long call = failures.begin();
        Launched l;
        try {
            l = start(replicas, c, true);
        } catch (RuntimeException e) {
            throw failures.thrown(call, e);
        }
        if (l == null) {
            return SyncHandle.done();
        }
        return failures.asynchronous(call, new SyncHandle() {
            private volatile boolean awaited;

            @Override
            public void await() {
                synchronized (NcclSynchronizer.this) {
                    if (awaited || closed && watch.broken() == null) {
                        return; // closing waited for the last call, so this one too, and nothing failed
                    }
                    try {
                        checkUsable();
                        watch.await(l.what, l.start, l.deadline);
                    } catch (RuntimeException e) {
                        throw failed(e);
                    }
                    awaited = true;
                    finish(l);
                }
            }

            @Override
            public boolean isDone() {
                return awaited || watch.broken() != null || closed || LocalHandles.allDone(nccl.finishedEvents);
            }
        });
    }

    /**
     * A queued call's failure as both forms throw it: a timeout as it is (another rank did not
     * take part), anything else as {@link SyncFailedException} naming the replica.
     */
    private RuntimeException failed(RuntimeException e) {
        if (e instanceof SyncTimeoutException || e instanceof SyncFailedException) {
            return e;
        }
        int named = LocalHandles.failedReplica(nccl.devices, e);
        int r = named < 0 && nccl.devices.size() == 1 ? 0 : named;
        return new SyncFailedException(SyncBackend.NCCL, r, r < 0 ? null : nccl.devices.get(r).id(), e);
    }

    /** What a queued call needs to be waited for and counted. */
    private record Launched(String what, String phase, long entered, long start, long deadline, long bytes) {
    }

    /**
     * Checks, agrees on the layout and the collective, orders after the caller's work, queues; null
     * when there is nothing to move.
     */
    private Launched start(List<Replica> replicas, Collective c, boolean async) {
        checkUsable();
        replicasChecked.check(replicas, nccl.devices);
        NcclPlan p = plan(replicas);
        long entered = System.nanoTime();
        if (nccl.worldSize == 1 && c != Collective.AVERAGE) {
            // One replica is every shard's owner and the root: each of these leaves it as it is.
            countCall(stats, p.bytes, System.nanoTime() - entered);
            return null;
        }
        // The layout check first: it touches no gradient, so it needs none of the caller's work, and
        // an asynchronous call then waits on the host for the other ranks only, not for its own
        // caller's streams (the check's tiny all-reduce would queue behind them).
        boolean merged = true;
        long checked = entered;
        if (nccl.multiProcess) {
            String what = p.calls(c, true, nccl.rank, nccl.worldSize).checkDescription;
            merged = layoutCheck.agree(p, c, what, entered, entered + timeoutNanos);
            checked = System.nanoTime();
            stats.phase("layout check", checked - entered);
        }
        NcclCalls calls = p.calls(c, merged, nccl.rank, nccl.worldSize);
        if (calls.calls.isEmpty()) {
            countCall(stats, p.bytes, checked - entered);
            return null;
        }
        boolean callerStreams = false;
        for (int r = 0; r < nccl.devices.size(); r++) {
            CudaStream caller = (CudaStream) replicas.get(r).stream();
            if (caller != null) {
                caller.record(nccl.readyEvents[r]); // the caller's work on the gradients comes first
                nccl.streams[r].waitFor(nccl.readyEvents[r]);
                callerStreams = true;
            } else if (waitForCaller) {
                nccl.devices.get(r).synchronize();
            }
        }
        long start = System.nanoTime();
        stats.phase("wait for caller", start - checked);
        long deadline = start + timeoutNanos;
        launch(calls, start, deadline);
        if (async || callerStreams) {
            for (int r = 0; r < nccl.devices.size(); r++) {
                nccl.streams[r].record(nccl.finishedEvents[r]);
                CudaStream caller = (CudaStream) replicas.get(r).stream();
                if (caller != null) {
                    caller.waitFor(nccl.finishedEvents[r]); // its next work runs after the collective
                }
            }
        }
        String phase = c == Collective.AVERAGE ? "all-reduce" : c.kind().label();
        return new Launched(calls.description, phase, entered, start, deadline, p.bytes);
    }

    /** The plan of {@code replicas}' layout: a kept one, else made and kept. */
    private NcclPlan plan(List<Replica> replicas) {
        for (NcclPlan kept : plans) {
            if (kept.madeFor(replicas)) {
                if (kept != plans.peekFirst()) {
                    plans.remove(kept);
                    plans.addFirst(kept);
                }
                return kept;
            }
        }
        NcclPlan made = NcclPlan.of(replicas, NcclPlan::cudaAddress);
        plans.addFirst(made);
        if (plans.size() > PLANS_KEPT) {
            plans.removeLast();
        }
        return made;
    }

    private void finish(Launched l) {
        long end = System.nanoTime();
        stats.phase(l.phase, end - l.start);
        countCall(stats, l.bytes, end - l.entered);
    }

    @Override
    public SyncStats stats() {
        return stats;
    }

    /** Every local replica's part of every call, in one NCCL group where there is more than one. */
    private void launch(NcclCalls calls, long start, long deadline) {
        int n = nccl.comms.size();
        boolean group = n > 1 || calls.calls.size() > 1;
        watch.arm(deadline);
        RuntimeException failure = null;
        try {
            if (group) {
                Nccl.groupStart();
            }
            try {
                for (NcclCalls.Call call : calls.calls) {
                    for (int r = 0; r < n; r++) {
                        call.enqueue(nccl.comms.get(r), r, nccl.streamAddresses[r]);
                    }
                }
            } finally {
                if (group) {
                    Nccl.groupEnd();
                }
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        watch.afterLaunch(failure, calls.description, start);
    }

    @Override
    public synchronized void barrier() {
        long call = failures.begin(); // a failure it reports may be a dropped handle's: close then keeps quiet
        try {
            meetEveryRank();
        } catch (RuntimeException e) {
            throw failures.thrown(call, e);
        }
    }

    /** The barrier: every local device idle, then a one-float all-reduce that every rank must join. */
    private void meetEveryRank() {
        checkUsable();
        for (CudaDevice d : nccl.devices) {
            d.synchronize();
        }
        long start = System.nanoTime();
        long deadline = start + timeoutNanos;
        int n = nccl.comms.size();
        watch.arm(deadline);
        RuntimeException failure = null;
        try {
            if (n > 1) {
                Nccl.groupStart();
            }
            try {
                for (int r = 0; r < n; r++) {
                    nccl.comms.get(r).allReduceInPlace(nccl.scratch[r].address(), 1, NcclDataType.FLOAT32,
                            NcclRedOp.SUM, nccl.streamAddresses[r]);
                }
            } finally {
                if (n > 1) {
                    Nccl.groupEnd();
                }
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        watch.afterLaunch(failure, "the barrier", start);
        watch.await("the barrier", start, deadline);
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException("nccl synchronizer is closed");
        }
        String why = watch.broken();
        if (why != null) {
            throw new IllegalStateException("nccl synchronizer is unusable since an earlier failure: " + why);
        }
    }

    /**
     * Waits for the last call where its handle was dropped (within the timeout: the other ranks may
     * never come), then frees everything; that call's failure is thrown here once the rest is done.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        RuntimeException unreported = failures.unreported();
        closed = true;
        watch.close();
        RuntimeException first = null;
        if (!watch.aborted()) {
            try {
                Nccl.closeAll(nccl.comms);
            } catch (RuntimeException e) {
                first = e;
            }
        }
        if (!watch.aborted()) {
            // Freeing device memory waits for the device; after an abort a kernel might not have
            // exited yet, and close must not hang. The little memory stays until the process ends.
            nccl.release();
        }
        if (unreported != null) {
            throw unreported;
        }
        if (first != null && !failures.lastReported()) {
            throw first;
        }
    }
}
