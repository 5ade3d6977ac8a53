package io.gradsync.sync;

import static io.gradsync.sync.Resources.closeQuietly;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuStreamQuery;

import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclComm;
import io.gradsync.nccl.NcclDataType;
import io.gradsync.nccl.NcclRedOp;
import io.gradsync.nccl.NcclResult;
import io.gradsync.nccl.NcclUniqueId;
import io.gradsync.sync.nccl.rendezvous.Rendezvous;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaEvent;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.cuda.driver.CudaHandles;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import jcuda.CudaException;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

/**
 * NCCL's all-reduce with {@code ncclAvg}, in place, in one of two shapes:
 * <ul>
 * <li>one process, every local GPU: one communicator per device ({@code ncclCommInitAll}), all
 * calls of a step in one NCCL group;</li>
 * <li>one process per GPU (torchrun style): rank 0 serves the unique id ({@link Rendezvous}), every
 * rank joins with {@code ncclCommInitRank} on its one device; across hosts NCCL picks its network
 * transport by itself. Before a collective the ranks compare their gradient layouts with a tiny
 * all-reduce, so that a mismatch fails with a message instead of a hang or garbage.</li>
 * </ul>
 * Gradients that lie back to back in one buffer on every local replica go as one call. Each call
 * waits for the caller's work on the devices first, and returns once every replica holds the
 * average. Waiting polls the streams and the communicators' asynchronous errors; past
 * {@link SyncOptions#timeout()} (or on an NCCL error) the communicators are aborted and the call
 * throws, naming ranks, devices and time. After that the synchronizer is unusable.
 */
final class NcclSynchronizer implements GradientSynchronizer {
    /** Layout check: 12 values cut into 16-bit pieces (exact in fp32), then their negations, reduced with max. */
    private static final int CHECK_VALUES = 12;
    private static final int CHECK_FLOATS = 2 * CHECK_VALUES;
    private static final long SCRATCH_BYTES = CHECK_FLOATS * Float.BYTES;
    /** Spin on the streams this long (the latency that matters is at small sizes), then park. */
    private static final long SPIN_NANOS = 10_000_000L;
    private static final long PARK_NANOS = 20_000L;
    /** NCCL's async error is read this often while waiting. */
    private static final long ERROR_POLL_NANOS = 1_000_000L;
    private static final String NOT_READY_TEXT = CUresult.stringFor(CUresult.CUDA_ERROR_NOT_READY);

    private final List<CudaDevice> devices;
    private final List<NcclComm> comms;
    private final CudaStream[] streams;
    private final CUstream[] streamHandles;
    /** Primary contexts, retained here: one thread polls every device's stream, each under its own context. */
    private final CUcontext[] contexts;
    private final long[] streamAddresses;
    private final CudaBuffer[] scratch;
    private final HostBuffer scratchHost;
    private final boolean[] done;
    /** Per device: recorded on the caller's stream, and on ours after the all-reduce. */
    private final CudaEvent[] readyEvents;
    private final CudaEvent[] finishedEvents;
    private final int rank;
    private final int worldSize;
    private final int localRank;
    private final boolean multiProcess;
    private final long timeoutNanos;
    private final SyncOptions options;
    private final LaunchWatchdog watchdog;
    private final AtomicBoolean aborted = new AtomicBoolean();
    private final SyncStats stats = new SyncStats();
    private Plan plan;
    private Plan agreed;
    private boolean agreedMerged;
    private volatile boolean closed;
    private volatile String broken;

    /** One process driving every device in {@code devices}. */
    static NcclSynchronizer singleProcess(List<CudaDevice> devices, SyncOptions options) {
        int[] ordinals = devices.stream().mapToInt(Device::ordinal).toArray();
        List<NcclComm> comms = Nccl.initAll(ordinals);
        return new NcclSynchronizer(devices, comms, 0, devices.size(), 0, false, options);
    }

    /** One rank of a multi-process job, on {@code device}. */
    static NcclSynchronizer multiProcess(CudaDevice device, RendezvousConfig config, SyncOptions options) {
        NcclUniqueId id = Rendezvous.exchange(config, options.timeout(), Nccl::newUniqueId);
        NcclComm comm = initRankWithin(device, config, id, options);
        return new NcclSynchronizer(List.of(device), List.of(comm), config.rank(), config.worldSize(), config.localRank(),
                true, options);
    }

    private NcclSynchronizer(List<CudaDevice> devices, List<NcclComm> comms, int rank, int worldSize, int localRank,
            boolean multiProcess, SyncOptions options) {
        this.devices = List.copyOf(devices);
        this.comms = comms;
        this.rank = rank;
        this.worldSize = worldSize;
        this.localRank = localRank;
        this.multiProcess = multiProcess;
        this.options = options;
        this.timeoutNanos = options.timeout().toNanos();
        int n = devices.size();
        streams = new CudaStream[n];
        streamHandles = new CUstream[n];
        contexts = new CUcontext[n];
        streamAddresses = new long[n];
        scratch = new CudaBuffer[n];
        done = new boolean[n];
        readyEvents = new CudaEvent[n];
        finishedEvents = new CudaEvent[n];
        HostBuffer host = null;
        try {
            for (int r = 0; r < n; r++) {
                contexts[r] = retainPrimaryContext(devices.get(r));
                streams[r] = devices.get(r).createStream();
                streamHandles[r] = CudaHandles.stream(streams[r]);
                streamAddresses[r] = streams[r].address();
                scratch[r] = devices.get(r).allocate(SCRATCH_BYTES);
                readyEvents[r] = devices.get(r).createEvent();
                finishedEvents[r] = devices.get(r).createEvent();
            }
            host = devices.getFirst().allocateHost(SCRATCH_BYTES);
        } catch (RuntimeException e) {
            for (int r = 0; r < n; r++) {
                closeQuietly(streams[r]);
                closeQuietly(scratch[r]);
                closeQuietly(readyEvents[r]);
                closeQuietly(finishedEvents[r]);
            }
            closeQuietly(host);
            releaseContexts();
            Nccl.closeAll(comms);
            throw e;
        }
        scratchHost = host;
        watchdog = new LaunchWatchdog("gradsync-nccl-watchdog-rank" + rank, this::abortAll);
    }

    /** The device's primary context (the one JCuda's device and NCCL use), retained until close. */
    private static CUcontext retainPrimaryContext(CudaDevice device) {
        CUdevice handle = new CUdevice();
        CUcontext context = new CUcontext();
        int rc = cuDeviceGet(handle, device.ordinal());
        if (rc == CUresult.CUDA_SUCCESS) {
            rc = cuDevicePrimaryCtxRetain(context, handle);
        }
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException("nccl: cuDevicePrimaryCtxRetain failed on " + device.id() + ": "
                    + CUresult.stringFor(rc));
        }
        return context;
    }

    private void releaseContexts() {
        for (int r = 0; r < contexts.length; r++) {
            if (contexts[r] != null) {
                CUdevice handle = new CUdevice();
                if (cuDeviceGet(handle, devices.get(r).ordinal()) == CUresult.CUDA_SUCCESS) {
                    cuDevicePrimaryCtxRelease(handle);
                }
                contexts[r] = null;
            }
        }
    }

    /**
     * {@code ncclCommInitRank} cannot time out by itself (a rank that died after the rendezvous
     * leaves it waiting), so it runs on a daemon thread that we stop waiting for at the timeout.
     */
    private static NcclComm initRankWithin(CudaDevice device, RendezvousConfig config, NcclUniqueId id,
            SyncOptions options) {
        AtomicBoolean gaveUp = new AtomicBoolean();
        FutureTask<NcclComm> init = new FutureTask<>(() -> {
            NcclComm comm = Nccl.initRank(device.ordinal(), config.worldSize(), id, config.rank());
            if (gaveUp.get()) {
                comm.abort(); // nobody waits for it any more
            }
            return comm;
        });
        Thread.ofPlatform().daemon().name("gradsync-nccl-init-rank" + config.rank()).start(init);
        try {
            return init.get(options.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            gaveUp.set(true);
            if (init.isDone() && !init.isCancelled()) {
                try {
                    init.get().abort();
                } catch (Exception ignored) {
                    // it failed after all: nothing to release
                }
            }
            throw new SyncTimeoutException(String.format(Locale.ROOT,
                    "nccl: rank %d (%s): ncclCommInitRank of %d ranks did not finish within the %.1f s timeout"
                            + " (a rank died after the rendezvous?)",
                    config.rank(), device.id(), config.worldSize(), options.timeout().toNanos() / 1e9));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("nccl: rank " + config.rank() + ": ncclCommInitRank failed", cause);
        } catch (InterruptedException e) {
            gaveUp.set(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("nccl: rank " + config.rank() + ": interrupted in ncclCommInitRank", e);
        }
    }

    @Override
    public SyncBackend backend() {
        return SyncBackend.NCCL;
    }

    @Override
    public int localRank() {
        return localRank;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int worldSize() {
        return worldSize;
    }

    @Override
    public synchronized void synchronize(List<Replica> replicas) {
        Launched l = start(replicas, false);
        if (l != null) {
            await(l.what, l.start, l.deadline);
            finish(l);
        }
    }

    /**
     * Queues the all-reduce and returns. With several processes the layout check before it (on by
     * default) still waits for the other ranks on the host.
     */
    @Override
    public synchronized SyncHandle synchronizeAsync(List<Replica> replicas) {
        Launched l = start(replicas, true);
        if (l == null) {
            return SyncHandle.done();
        }
        return new SyncHandle() {
            private volatile boolean awaited;

            @Override
            public void await() {
                synchronized (NcclSynchronizer.this) {
                    if (awaited) {
                        return;
                    }
                    try {
                        checkUsable();
                        NcclSynchronizer.this.await(l.what, l.start, l.deadline);
                    } catch (RuntimeException e) {
                        int named = LocalSynchronizer.failedReplica(devices, e);
                        int r = named < 0 && devices.size() == 1 ? 0 : named;
                        throw new SyncFailedException(SyncBackend.NCCL, r, r < 0 ? null : devices.get(r).id(), e);
                    }
                    awaited = true;
                    finish(l);
                }
            }

            @Override
            public boolean isDone() {
                return awaited || broken != null || closed || LocalSynchronizer.allDone(finishedEvents);
            }
        };
    }

    /** What a queued call needs to be waited for and counted. */
    private record Launched(String what, long entered, long start, long deadline, long checked, long bytes) {
    }

    /** Checks, orders after the caller's work, agrees on the layout, queues; null when there is nothing to reduce. */
    private Launched start(List<Replica> replicas, boolean async) {
        checkUsable();
        ReplicaCheck.check(replicas, devices);
        Plan p = plan;
        if (p == null || !p.madeFor(replicas)) {
            p = Plan.of(replicas, Plan::cudaAddress);
            plan = p;
        }
        long entered = System.nanoTime();
        boolean callerStreams = false;
        for (int r = 0; r < devices.size(); r++) {
            CudaStream caller = (CudaStream) replicas.get(r).stream();
            if (caller != null) {
                caller.record(readyEvents[r]); // the caller's work on the gradients comes first
                streams[r].waitFor(readyEvents[r]);
                callerStreams = true;
            } else if (options.waitForCaller()) {
                devices.get(r).synchronize();
            }
        }
        long start = System.nanoTime();
        stats.phase("wait for caller", start - entered);
        long deadline = start + timeoutNanos;
        Calls calls = p.merged;
        if (multiProcess) {
            calls = agreeOnLayout(p, start, deadline) ? p.merged : p.each;
        }
        long checked = System.nanoTime();
        if (multiProcess) {
            stats.phase("layout check", checked - start);
        }
        if (calls.count.length == 0) {
            stats.call(p.bytes, checked - entered);
            return null;
        }
        launch(calls, start, deadline, p);
        if (async || callerStreams) {
            for (int r = 0; r < devices.size(); r++) {
                streams[r].record(finishedEvents[r]);
                CudaStream caller = (CudaStream) replicas.get(r).stream();
                if (caller != null) {
                    caller.waitFor(finishedEvents[r]); // its next work runs after the average
                }
            }
        }
        return new Launched(p.description(calls), entered, start, deadline, checked, p.bytes);
    }

    private void finish(Launched l) {
        long end = System.nanoTime();
        stats.phase("all-reduce", end - l.checked);
        stats.call(l.bytes, end - l.entered);
    }

    @Override
    public SyncStats stats() {
        return stats;
    }

    /**
     * Ranks compare element total, gradient layout and the calls they would make; all ranks get
     * the same reduced vector, so all decide alike. Returns whether the merged calls may be used.
     */
    private boolean agreeOnLayout(Plan p, long start, long deadline) {
        if (options.layoutCheck() == SyncOptions.LayoutCheck.ON_CHANGE && agreed != null
                && agreed.layoutHash == p.layoutHash && agreed.callHash == p.callHash && agreed.total == p.total) {
            return agreedMerged;
        }
        MemorySegment host = scratchHost.segment();
        put(host, 0, p.total);
        put(host, 1, p.layoutHash);
        put(host, 2, p.callHash);
        CudaStream s = streams[0];
        s.copyFromHost(scratchHost, 0, scratch[0], 0, SCRATCH_BYTES);
        watchdog.arm(deadline);
        RuntimeException failure = null;
        try {
            comms.getFirst().allReduceInPlace(scratch[0].address(), CHECK_FLOATS, NcclDataType.FLOAT32, NcclRedOp.MAX,
                    streamAddresses[0]);
        } catch (RuntimeException e) {
            failure = e;
        }
        afterLaunch(failure, "the layout check", start);
        s.copyToHost(scratch[0], 0, scratchHost, 0, SCRATCH_BYTES);
        await(p.checkDescription, start, deadline);
        boolean sameTotal = agree(host, 0);
        boolean sameLayout = agree(host, 1);
        boolean sameCalls = agree(host, 2);
        if (!sameTotal || !sameLayout) {
            String what = !sameTotal ? "the total element count differs" : "gradient names, sizes, dtypes or order differ";
            throw new IllegalArgumentException("nccl: gradient layouts differ between the " + worldSize + " ranks ("
                    + what + "), nothing was averaged; rank " + rank + " (" + devices.getFirst().id() + ") has "
                    + p.layout());
        }
        agreed = p;
        agreedMerged = sameCalls; // gradients contiguous on some ranks only: every rank sends them one by one
        return agreedMerged;
    }

    /** Whether all ranks sent the same value {@code v}: its reduced max equals its reduced min, piece by piece. */
    private static boolean agree(MemorySegment reduced, int v) {
        for (int piece = 0; piece < 4; piece++) {
            float max = reduced.getAtIndex(ValueLayout.JAVA_FLOAT, 4L * v + piece);
            float min = -reduced.getAtIndex(ValueLayout.JAVA_FLOAT, CHECK_VALUES + 4L * v + piece);
            if (max != min) {
                return false;
            }
        }
        return true;
    }

    /** Value {@code v} as four 16-bit pieces (exact in fp32), and their negations in the second half. */
    private static void put(MemorySegment host, int v, long value) {
        for (int piece = 0; piece < 4; piece++) {
            float f = (float) ((value >>> (16 * piece)) & 0xFFFF);
            host.setAtIndex(ValueLayout.JAVA_FLOAT, 4L * v + piece, f);
            host.setAtIndex(ValueLayout.JAVA_FLOAT, CHECK_VALUES + 4L * v + piece, -f);
        }
    }

    private void launch(Calls calls, long start, long deadline, Plan p) {
        int n = comms.size();
        boolean group = n > 1 || calls.count.length > 1;
        watchdog.arm(deadline);
        RuntimeException failure = null;
        try {
            if (group) {
                Nccl.groupStart();
            }
            try {
                for (int c = 0; c < calls.count.length; c++) {
                    for (int r = 0; r < n; r++) {
                        comms.get(r).allReduceInPlace(calls.address[r][c], calls.count[c], calls.type[c], NcclRedOp.AVG,
                                streamAddresses[r]);
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
        afterLaunch(failure, p.description(calls), start);
    }

    /** Turns a watchdog abort or an NCCL failure during enqueue into the exception the caller sees. */
    private void afterLaunch(RuntimeException failure, String what, long start) {
        if (!watchdog.disarm()) {
            SyncTimeoutException e = timeout(what, start, "enqueueing it blocked");
            if (failure != null) {
                e.addSuppressed(failure);
            }
            throw e;
        }
        if (failure != null) {
            String message = "nccl: " + where() + ": enqueueing " + what + " failed: " + failure.getMessage()
                    + "; communicators aborted";
            abortAll();
            broken = message;
            throw new IllegalStateException(message, failure);
        }
    }

    /** Polls every stream until done; reads NCCL's async errors meanwhile; aborts at the deadline. */
    private void await(String what, long start, long deadline) {
        int n = streams.length;
        Arrays.fill(done, false);
        int left = n;
        long now = System.nanoTime();
        long nextErrorPoll = now + ERROR_POLL_NANOS;
        long spinUntil = now + SPIN_NANOS;
        while (true) {
            for (int r = 0; r < n; r++) {
                if (done[r]) {
                    continue;
                }
                if (n > 1) {
                    cuCtxSetCurrent(contexts[r]); // a stream is queried under its own device's context
                }
                int rc = query(streamHandles[r]);
                if (rc == CUresult.CUDA_SUCCESS) {
                    done[r] = true;
                    left--;
                } else if (rc != CUresult.CUDA_ERROR_NOT_READY) {
                    String message = "nccl: " + what + " failed on " + devices.get(r).id() + ": cuStreamQuery: "
                            + CUresult.stringFor(rc) + "; communicators aborted";
                    abortAll();
                    broken = message;
                    throw new IllegalStateException(message);
                }
            }
            if (left == 0) {
                return;
            }
            now = System.nanoTime();
            if (now - nextErrorPoll >= 0) {
                checkAsyncErrors(what);
                nextErrorPoll = now + ERROR_POLL_NANOS;
            }
            if (now - deadline >= 0) {
                abortAll();
                throw timeout(what, start, "not finished on " + unfinished());
            }
            if (now - spinUntil < 0) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
    }

    /**
     * {@code cuStreamQuery}'s result code. JCuda throws instead of returning codes when some code in
     * the process enabled its exceptions (a global switch), so that case is mapped back to the code.
     */
    private static int query(CUstream stream) {
        try {
            return cuStreamQuery(stream);
        } catch (CudaException e) {
            return NOT_READY_TEXT.equals(e.getMessage()) ? CUresult.CUDA_ERROR_NOT_READY : CUresult.CUDA_ERROR_UNKNOWN;
        }
    }

    private void checkAsyncErrors(String what) {
        for (int r = 0; r < comms.size(); r++) {
            NcclResult result = comms.get(r).asyncError();
            if (result != NcclResult.SUCCESS && result != NcclResult.IN_PROGRESS) {
                String last = comms.get(r).lastError();
                String message = "nccl: " + what + ": rank " + (rank + r) + " (" + devices.get(r).id() + ") reported "
                        + result + (last.isBlank() ? "" : " (" + last.strip() + ")")
                        + " (a peer rank died or its network failed?); communicators aborted";
                abortAll();
                broken = message;
                throw new IllegalStateException(message);
            }
        }
    }

    private String unfinished() {
        List<String> names = new ArrayList<>();
        for (int r = 0; r < done.length; r++) {
            if (!done[r]) {
                names.add("rank " + (rank + r) + " (" + devices.get(r).id() + ")");
            }
        }
        return String.join(", ", names);
    }

    private SyncTimeoutException timeout(String what, long start, String detail) {
        String message = String.format(Locale.ROOT,
                "nccl: %s did not complete within the %.1f s timeout (%.1f s elapsed; %s) on %s of %d ranks;"
                        + " communicators aborted: a rank died, hangs or never arrived",
                what, timeoutNanos / 1e9, (System.nanoTime() - start) / 1e9, detail, where(), worldSize);
        broken = message;
        return new SyncTimeoutException(message);
    }

    private String where() {
        if (!multiProcess) {
            return "this process's GPUs " + String.join(", ", devices.stream().map(Device::id).toList());
        }
        return "rank " + rank + " (local rank " + localRank + ", " + devices.getFirst().id() + ")";
    }

    /** Frees the communicators at once, unblocking any kernel or call stuck on a dead peer. Runs once. */
    private void abortAll() {
        if (!aborted.compareAndSet(false, true)) {
            return;
        }
        if (broken == null) {
            broken = "nccl: communicators aborted after a timeout on " + where();
        }
        for (NcclComm c : comms) {
            try {
                c.abort();
            } catch (RuntimeException e) {
                // aborting is best effort; the error that led here is what the caller needs
            }
        }
    }

    @Override
    public synchronized void barrier() {
        checkUsable();
        for (CudaDevice d : devices) {
            d.synchronize();
        }
        long start = System.nanoTime();
        long deadline = start + timeoutNanos;
        int n = comms.size();
        watchdog.arm(deadline);
        RuntimeException failure = null;
        try {
            if (n > 1) {
                Nccl.groupStart();
            }
            try {
                for (int r = 0; r < n; r++) {
                    comms.get(r).allReduceInPlace(scratch[r].address(), 1, NcclDataType.FLOAT32, NcclRedOp.SUM,
                            streamAddresses[r]);
                }
            } finally {
                if (n > 1) {
                    Nccl.groupEnd();
                }
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        afterLaunch(failure, "the barrier", start);
        await("the barrier", start, deadline);
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException("nccl synchronizer is closed");
        }
        String why = broken;
        if (why != null) {
            throw new IllegalStateException("nccl synchronizer is unusable since an earlier failure: " + why);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        watchdog.close();
        RuntimeException first = null;
        if (!aborted.get()) {
            try {
                Nccl.closeAll(comms);
            } catch (RuntimeException e) {
                first = e;
            }
        }
        if (aborted.get()) {
            // Freeing device memory waits for the device; after an abort a kernel might not have
            // exited yet, and close must not hang. The little memory stays until the process ends.
            return;
        }
        for (int r = 0; r < streams.length; r++) {
            closeQuietly(streams[r]);
            closeQuietly(scratch[r]);
            closeQuietly(readyEvents[r]);
            closeQuietly(finishedEvents[r]);
        }
        closeQuietly(scratchHost);
        releaseContexts();
        if (first != null) {
            throw first;
        }
    }

    static NcclDataType ncclType(DType dtype) {
        return switch (dtype) {
            case FP32 -> NcclDataType.FLOAT32;
            case BF16 -> NcclDataType.BFLOAT16;
            case FP16 -> NcclDataType.FLOAT16;
        };
    }

    /** The NCCL calls of one step: per call an element count and type, per replica and call an address. */
    record Calls(long[][] address, long[] count, NcclDataType[] type) {
    }

    /** What a replica set turns into, cached while the caller passes the same replica objects. */
    static final class Plan {
        final Replica[] key;
        final Calls merged;
        final Calls each;
        final long total;
        final long layoutHash;
        final long callHash;
        final String checkDescription;
        final long bytes;
        private final List<Gradient> gradients;
        private final String mergedDescription;
        private final String eachDescription;

        private Plan(Replica[] key, Calls merged, Calls each, long total, long layoutHash, long callHash,
                List<Gradient> gradients) {
            this.key = key;
            this.merged = merged;
            this.each = each;
            this.total = total;
            this.layoutHash = layoutHash;
            this.callHash = callHash;
            this.gradients = gradients;
            this.bytes = gradients.stream().mapToLong(Gradient::byteSize).sum();
            // Made once per plan: the hot path passes them along and only failures read them.
            this.mergedDescription = describe(merged);
            this.eachDescription = describe(each);
            this.checkDescription = "the layout check before " + mergedDescription;
        }

        String description(Calls calls) {
            return calls == merged ? mergedDescription : eachDescription;
        }

        boolean madeFor(List<Replica> replicas) {
            if (replicas.size() != key.length) {
                return false;
            }
            for (int r = 0; r < key.length; r++) {
                if (replicas.get(r) != key[r]) {
                    return false;
                }
            }
            return true;
        }

        /** @param address where a gradient's first element is on its device (CUDA: {@link #cudaAddress}) */
        static Plan of(List<Replica> replicas, java.util.function.ToLongFunction<Gradient> address) {
            int n = replicas.size();
            List<Gradient> first = replicas.getFirst().gradients();
            int g = first.size();
            long[][] addresses = new long[n][g];
            for (int r = 0; r < n; r++) {
                List<Gradient> grads = replicas.get(r).gradients();
                for (int i = 0; i < g; i++) {
                    addresses[r][i] = address.applyAsLong(grads.get(i));
                }
            }
            // Calls: skip empty gradients; merge a gradient into the previous call where it follows
            // it directly in the same buffer, with the same dtype, on every replica.
            List<long[]> runs = new ArrayList<>(); // {first gradient, elements}
            List<Integer> eachIndex = new ArrayList<>();
            int previous = -1;
            for (int i = 0; i < g; i++) {
                Gradient gi = first.get(i);
                if (gi.count() == 0) {
                    continue;
                }
                eachIndex.add(i);
                if (previous >= 0 && follows(replicas, previous, i)) {
                    runs.getLast()[1] += gi.count();
                } else {
                    runs.add(new long[] {i, gi.count()});
                }
                previous = i;
            }
            Calls merged = calls(replicas, addresses, runs.stream().mapToInt(a -> (int) a[0]).toArray(),
                    runs.stream().mapToLong(a -> a[1]).toArray());
            int[] eachFirst = eachIndex.stream().mapToInt(Integer::intValue).toArray();
            long[] eachCount = Arrays.stream(eachFirst).mapToLong(i -> first.get(i).count()).toArray();
            Calls each = calls(replicas, addresses, eachFirst, eachCount);
            long total = 0;
            long layout = 0xcbf29ce484222325L; // FNV-1a over names, counts, dtypes, in order
            for (Gradient gr : first) {
                total += gr.count();
                for (int c = 0; c < gr.name().length(); c++) {
                    layout = fnv(layout, gr.name().charAt(c));
                }
                layout = fnv(fnv(layout, gr.count()), gr.dtype().ordinal() + 1);
            }
            long callHash = 0xcbf29ce484222325L;
            for (int c = 0; c < merged.count.length; c++) {
                callHash = fnv(fnv(callHash, merged.count[c]), merged.type[c].ncclValue());
            }
            return new Plan(replicas.toArray(Replica[]::new), merged, each, total, layout, callHash, first);
        }

        private static Calls calls(List<Replica> replicas, long[][] addresses, int[] firstGradient, long[] counts) {
            List<Gradient> first = replicas.getFirst().gradients();
            long[][] address = new long[replicas.size()][firstGradient.length];
            NcclDataType[] type = new NcclDataType[firstGradient.length];
            for (int c = 0; c < firstGradient.length; c++) {
                type[c] = ncclType(first.get(firstGradient[c]).dtype());
                for (int r = 0; r < replicas.size(); r++) {
                    address[r][c] = addresses[r][firstGradient[c]];
                }
            }
            return new Calls(address, counts, type);
        }

        private static boolean follows(List<Replica> replicas, int previous, int next) {
            for (Replica replica : replicas) {
                Gradient a = replica.gradients().get(previous);
                Gradient b = replica.gradients().get(next);
                if (a.buffer() != b.buffer() || a.dtype() != b.dtype() || a.byteOffset() + a.byteSize() != b.byteOffset()) {
                    return false;
                }
            }
            return true;
        }

        static long cudaAddress(Gradient g) {
            DeviceBuffer b = g.buffer();
            if (!(b instanceof CudaBuffer cuda)) {
                throw new IllegalArgumentException("gradient '" + g.name() + "' is in a "
                        + b.device().runtime().label() + " buffer; backend nccl needs CUDA buffers");
            }
            return cuda.address() + g.byteOffset();
        }

        private static long fnv(long h, long value) {
            for (int i = 0; i < 8; i++) {
                h ^= (value >>> (8 * i)) & 0xFF;
                h *= 0x100000001b3L;
            }
            return h;
        }

        private String describe(Calls calls) {
            long bytes = 0;
            for (Gradient gr : gradients) {
                bytes += gr.byteSize();
            }
            return String.format(Locale.ROOT, "the all-reduce of %d gradient(s), %d elements, %.1f MiB per replica in %d call(s)",
                    gradients.size(), total, bytes / 1048576.0, calls.count.length);
        }

        /** This rank's gradients, for the mismatch message: count, total, then the first few. */
        String layout() {
            StringBuilder sb = new StringBuilder().append(gradients.size()).append(" gradient(s), ").append(total)
                    .append(" elements: ");
            int shown = Math.min(8, gradients.size());
            for (int i = 0; i < shown; i++) {
                Gradient gr = gradients.get(i);
                sb.append(i == 0 ? "" : ", ").append('\'').append(gr.name()).append("' ").append(gr.dtype().label())
                        .append(" x ").append(gr.count());
            }
            if (shown < gradients.size()) {
                sb.append(", ... (").append(gradients.size() - shown).append(" more)");
            }
            return sb.toString();
        }
    }
}
