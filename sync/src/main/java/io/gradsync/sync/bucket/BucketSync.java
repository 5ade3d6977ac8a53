package io.gradsync.sync.bucket;

import io.gradsync.sync.FusedSumOfSquares;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import io.gradsync.sync.SyncHandle;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceStream;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Averages {@link GradientBuckets} through a {@link GradientSynchronizer}, overlapping the
 * collectives with backward: a bucket starts its all-reduce, asynchronously, as soon as its last
 * parameter is {@linkplain #markReady marked ready}; {@link #finish()} waits for all of them.
 *
 * <pre>{@code
 * for (layer from last to first) {
 *     backward(layer) on every replica;            // writes buckets.gradient(r, name) in place
 *     sync.markReady(layer.weight); sync.markReady(layer.bias);
 * }
 * StepResult r = sync.finish();                    // every replica holds the average
 * if (r.finite()) optimizer.step();
 * }</pre>
 *
 * <p><b>Ready means every local replica.</b> In one process driving several devices,
 * {@code markReady(p)} says that backward of {@code p} has finished on all replicas of this
 * process (the synchronizer averages all of them in one call). Under a multi-process launcher each
 * process has one replica and marks its own. Buckets start in the order they become ready; with
 * several processes that order must be the same on every rank, which holds when every rank marks
 * parameters in the same order (as the same backward does).
 *
 * <p>Calls never overlap: a synchronizer is one ordered stream of collectives. The caller's
 * thread never blocks in {@code markReady}. When every replica lives in this process, ready
 * buckets are queued and go together in one call (a call has a fixed cost, waiting for the
 * devices, launching, waiting for the result, that ten 25 MiB buckets would otherwise pay ten
 * times), as one range per run of consecutive buckets of one dtype (they lie back to back): a
 * background thread starts that call a linger ({@link Options#linger()}) after a burst's first
 * bucket, and buckets that become ready while a call runs go in the next one; {@code finish()}
 * makes the call for whatever is still queued itself, so the last buckets of a step wait for no
 * other thread. Across processes each bucket keeps its own call, on the background thread in the
 * order the buckets became ready, since when buckets become ready differs between ranks and every
 * rank must make the same calls.
 *
 * <p>Optional, in {@code finish()}: the global L2 norm over all buckets (float64 accumulation), a
 * finite check (the norm is finite exactly when every element is), and clipping to
 * {@link Options#maxNorm()}. Where the backend can sum the squares in its own averaging call
 * ({@link FusedSumOfSquares}: {@code cpu} per chunk as it averages, {@code ptx} after its
 * all-gather in the same graph) each bucket's sum comes from that call and the sums are added in
 * bucket order (the same bits however the buckets were grouped into calls). Elsewhere it is a
 * second pass once all buckets are averaged: on JVM devices over the buckets where they are, on
 * CUDA and OpenCL devices with the built-in kernels on the bucket memory (see {@code BucketNorms}).
 * Clipping scales every bucket afterwards, since its factor needs the whole norm.
 *
 * <p><b>Sharded buckets</b> ({@link GradientBuckets.Builder#sharded}, the ZeRO-2 pattern): each
 * bucket is reduce-scattered instead ({@link GradientSynchronizer#reduceScatter}, each bucket a
 * gradient of its own, so its shards are {@link GradientBuckets#shard}'s), so after
 * {@link #finish()} every replica holds the average on its shard of every bucket and the rest is
 * left as backward wrote it; the optimizer steps the shards alone, into parameters held in a bucket
 * set of the same layout ({@link GradientBuckets#sameLayout()}), and {@link #allGather} then gives
 * every replica all of them. The global norm is that of all the averages: each replica sums the
 * squares of its shards, and the replicas' sums are added in replica order (with several
 * processes, after an all-gather of their bits), so every replica gets the same norm and clipping
 * scales every shard alike; the same norm as unsharded up to the order of the float64 additions.
 *
 * <p>Not for concurrent steps: one step at a time, {@code markReady} may be called from any thread.
 * Does not own the buckets or the synchronizer; {@link #close()} stops the background thread.
 */
public final class BucketSync implements AutoCloseable {

    /**
     * @param maxNorm     clip the averaged gradients to this global L2 norm; 0 for no clipping
     * @param computeNorm compute the global norm and finite flag even without clipping
     * @param linger      single process: how long a call waits, once a bucket is ready, for the next
     *                    one to become ready too, so that buckets arriving together share a call. A
     *                    call costs a fixed time (tens of microseconds on GPUs, a pipeline's fill and
     *                    drain on the host) that a burst of buckets would otherwise pay once each;
     *                    backward takes far longer than this between buckets that do not come together.
     *                    Zero starts every call at once
     */
    public record Options(double maxNorm, boolean computeNorm, java.time.Duration linger) {
        /** Default of {@link #linger()}: a few times a GPU call's fixed cost. */
        public static final java.time.Duration DEFAULT_LINGER = java.time.Duration.ofNanos(200_000);

        public Options {
            if (!(maxNorm >= 0) || Double.isInfinite(maxNorm)) {
                throw new IllegalArgumentException("maxNorm must be finite and >= 0 (0 = no clipping), got " + maxNorm);
            }
            Objects.requireNonNull(linger, "linger");
            if (linger.isNegative() || linger.compareTo(java.time.Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("linger must be between 0 and 1 s, got " + linger);
            }
        }

        /** Averaging only. */
        public static Options averageOnly() {
            return new Options(0, false, DEFAULT_LINGER);
        }

        /** Also reports the global norm and whether every gradient is finite. */
        public Options withNorm() {
            return new Options(maxNorm, true, linger);
        }

        /** Clips to {@code norm} (implies computing the norm). */
        public Options withClipping(double norm) {
            return new Options(norm, true, linger);
        }

        /** How long a ready bucket waits for others to join its call (see {@link #linger()}). */
        public Options withLinger(java.time.Duration wait) {
            return new Options(maxNorm, computeNorm, wait);
        }

        boolean needsNorm() {
            return computeNorm || maxNorm > 0;
        }
    }

    /**
     * What one step did.
     *
     * @param finite     false when some averaged gradient is NaN or infinite (then nothing was
     *                   clipped; the caller should skip the step); true when not checked
     * @param globalNorm L2 norm of all averaged gradients before clipping; NaN when not computed
     * @param clipScale  the factor every gradient was multiplied by (1 when not clipped)
     * @param syncNanos  from the first bucket's start to the end of finish(), including the norm pass
     * @param waitNanos  how long finish() blocked: the part of the sync that backward did not hide
     */
    public record StepResult(boolean finite, double globalNorm, double clipScale, long syncNanos, long waitNanos) {
    }

    private final GradientBuckets buckets;
    private final GradientSynchronizer synchronizer;
    /** Buckets are reduce-scattered, each its own gradient, rather than averaged. */
    private final boolean sharded;
    private final Options options;
    private final BucketNorms norms;
    private final ScheduledExecutorService executor;
    private final int[] pending;           // parameters not yet ready, per bucket
    private final boolean[] ready;         // per parameter, registration order: marked in this step
    private final int[] bucketOfParameter; // per parameter, registration order
    private int readyCount;
    /** Several processes: each bucket's own all-reduce, started as it became ready. */
    private final List<Future<?>> inFlight = new ArrayList<>();
    /** This step's asynchronous calls, awaited in finish(). */
    private final List<SyncHandle> handles = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Per replica, the stream backward writes the gradients on; null: wait for the devices. */
    private volatile List<DeviceStream> streams;
    /** Single process: ready buckets not yet started, taken together by the next call. */
    private final List<Integer> queued = new ArrayList<>();
    /** Guards the queue and the fields below it: not the instance lock, which finish() holds while it waits. */
    private final Object queueLock = new Object();
    private final boolean coalesce;
    /**
     * Where the backend can sum the squares in its averaging pass ({@link FusedSumOfSquares}, one
     * process, norm asked for): that synchronizer; the norm then needs no second pass over the buckets.
     */
    private final FusedSumOfSquares fused;
    /** Per bucket, its sum of squares from the fused pass of this step. */
    private final double[] bucketSquares;
    private boolean draining;
    /** A call for queued buckets is running (on the drain thread or in finish()): calls never overlap. */
    private boolean calling;
    /** When the last bucket was queued (System.nanoTime), for the linger. */
    private long lastQueued;
    /** Buckets of this step not yet taken into a call: once all are queued, nothing is worth waiting for. */
    private int unstarted;
    /** Buckets of this step whose call has returned. */
    private int completed;
    /** The first failed call of this step. */
    private Throwable stepFailure;
    private boolean started;
    private long firstStart;
    private boolean closed;
    /**
     * The last finish() was interrupted while the step's collectives ran: the step stays as it was
     * (its calls still move the buckets' memory), to be ended by calling finish() again, or close().
     */
    private boolean interruptedMidStep;

    public BucketSync(GradientBuckets buckets, GradientSynchronizer synchronizer, Options options) {
        this.buckets = Objects.requireNonNull(buckets, "buckets");
        this.synchronizer = Objects.requireNonNull(synchronizer, "synchronizer");
        this.options = Objects.requireNonNull(options, "options");
        if (buckets.isSharded()) {
            if (buckets.shardWorldSize() != synchronizer.worldSize() || buckets.globalIndex(0) != synchronizer.rank()) {
                throw new IllegalArgumentException("sharded buckets are cut over " + buckets.shardWorldSize() + " replicas from global index "
                        + buckets.globalIndex(0) + ", but the synchronizer works on " + synchronizer.worldSize() + " from rank "
                        + synchronizer.rank() + ": build them with GradientBuckets.Builder.sharded(synchronizer)");
            }
        }
        this.sharded = buckets.isSharded();
        this.norms = new BucketNorms(buckets);
        this.pending = new int[buckets.buckets().size()];
        this.ready = new boolean[buckets.parameters().size()];
        this.bucketOfParameter = new int[ready.length];
        for (int i = 0; i < ready.length; i++) {
            bucketOfParameter[i] = buckets.bucketIndexOf(i);
        }
        this.coalesce = synchronizer.worldSize() == buckets.devices().size();
        this.fused = options.needsNorm() && coalesce && synchronizer.worldSize() > 1 && !sharded
                && synchronizer instanceof FusedSumOfSquares f ? f : null;
        this.bucketSquares = new double[buckets.buckets().size()];
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gradsync-buckets");
            t.setDaemon(true);
            return t;
        });
        resetStep();
    }

    public GradientBuckets buckets() {
        return buckets;
    }

    /**
     * Marks {@code parameter}'s gradient final on every local replica; when it completes its
     * bucket, that bucket's all-reduce starts in the background (in one process: a linger after the
     * first bucket of a burst, with the rest of the burst, or in {@link #finish()} if that comes first).
     *
     * @throws IllegalArgumentException for an unknown parameter
     * @throws IllegalStateException    when it was already marked in this step
     */
    public void markReady(String parameter) {
        markReady(buckets.indexOf(parameter));
    }

    /**
     * {@link #markReady(String)} by the parameter's position in registration order
     * ({@link GradientBuckets#indexOf}): for loops that mark hundreds of tensors per step.
     *
     * @throws IndexOutOfBoundsException for an index that names no parameter
     * @throws IllegalStateException     when it was already marked in this step
     */
    public synchronized void markReady(int parameter) {
        checkOpen();
        Objects.checkIndex(parameter, ready.length);
        if (ready[parameter]) {
            throw new IllegalStateException("parameter '" + buckets.parameters().get(parameter)
                    + "' is already marked ready in this step"
                    + (interruptedMidStep ? " (finish() was interrupted while its collectives ran: call finish() again to end the step)" : ""));
        }
        ready[parameter] = true;
        readyCount++;
        int bucket = bucketOfParameter[parameter];
        if (--pending[bucket] == 0) {
            if (!started) {
                started = true;
                firstStart = System.nanoTime();
            }
            if (!coalesce) {
                inFlight.add(executor.submit(() -> {
                    List<Replica> replicas = onStreams(buckets.bucketReplicas(bucket));
                    if (sharded) {
                        synchronizer.reduceScatter(replicas);
                    } else {
                        synchronizer.synchronize(replicas);
                    }
                }));
            } else {
                synchronized (queueLock) {
                    queued.add(bucket);
                    lastQueued = System.nanoTime();
                    if (queued.size() == unstarted) {
                        queueLock.notifyAll(); // nothing more to linger for; earlier arrivals need no wake-up (see lingerForMore)
                    }
                    if (!draining) {
                        draining = true;
                        // Started a linger from now: a burst of buckets then wakes no thread while it
                        // arrives, and finish() called within the linger makes the call itself.
                        executor.schedule(this::drain, options.linger().toNanos(), TimeUnit.NANOSECONDS);
                    }
                }
            }
        }
    }

    /**
     * Background: synchronizes everything queued, in calls of all buckets queued at the time, until
     * none is left (or finish() has taken the rest). A failed call ends it; finish() reports it.
     */
    private void drain() {
        while (true) {
            List<Integer> batch;
            synchronized (queueLock) {
                lingerForMore();
                while (calling && !queued.isEmpty()) { // finish() is calling: calls never overlap
                    waitOnQueue();
                }
                if (queued.isEmpty() || stepFailure != null) {
                    draining = false;
                    return;
                }
                batch = takeQueued();
            }
            try {
                runBatch(batch, false);
            } catch (RuntimeException | Error e) {
                synchronized (queueLock) {
                    draining = false;
                }
                return;
            }
        }
    }

    /**
     * Holding {@link #queueLock}: every queued bucket, in bucket order (the same call for the same
     * buckets whatever order they came in: one recorded schedule, neighbours merged), for one call
     * that the caller must make with {@link #runBatch}.
     */
    private List<Integer> takeQueued() {
        List<Integer> batch = queued.stream().sorted().toList();
        queued.clear();
        unstarted -= batch.size();
        calling = true;
        return batch;
    }

    /**
     * One call for {@code batch}; then records it done (or failed) and lets the next call start.
     * {@code inline}: the synchronous form, for the calls finish() makes itself (a host-averaging
     * backend's asynchronous form would hand the work to its background thread only to be waited for).
     */
    private void runBatch(List<Integer> batch, boolean inline) {
        Throwable failure = null;
        try {
            if (fused != null) {
                List<Replica> replicas = batch.size() == 1 ? buckets.bucketReplicas(batch.getFirst()) : BatchReplicas.perBucket(buckets, batch);
                double[] squares = fused.synchronizeSumOfSquares(onStreams(replicas)); // one per bucket, in batch order
                for (int i = 0; i < batch.size(); i++) {
                    bucketSquares[batch.get(i)] = squares[i];
                }
            } else if (sharded) { // each bucket its own gradient: its shards are the bucket's, not a range's
                List<Replica> replicas = onStreams(batch.size() == 1 ? buckets.bucketReplicas(batch.getFirst())
                        : BatchReplicas.perBucket(buckets, batch));
                if (inline) {
                    synchronizer.reduceScatter(replicas);
                } else {
                    handles.add(synchronizer.reduceScatterAsync(replicas));
                }
            } else {
                List<Replica> replicas = onStreams(BatchReplicas.ranges(buckets, batch));
                if (inline) {
                    synchronizer.synchronize(replicas);
                } else {
                    handles.add(synchronizer.synchronizeAsync(replicas)); // awaited in finish()
                }
            }
        } catch (RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            synchronized (queueLock) {
                calling = false;
                if (failure == null) {
                    completed += batch.size();
                } else if (stepFailure == null) {
                    stepFailure = failure;
                }
                queueLock.notifyAll();
            }
        }
    }

    /**
     * Single process, in finish(): until every bucket's call has returned or one failed (and no call
     * runs any more). Buckets queued while no call runs are called for on this thread rather than
     * left to the drain thread: no wake-up of another thread on the way to the result.
     *
     * @return the failure of this step, or null
     */
    private Throwable awaitBuckets() {
        while (true) {
            List<Integer> rest;
            synchronized (queueLock) {
                while (true) {
                    if (stepFailure != null && !calling) {
                        return stepFailure;
                    }
                    if (completed == pending.length) {
                        return null;
                    }
                    if (!calling && !queued.isEmpty()) {
                        rest = takeQueued();
                        break;
                    }
                    waitOnQueue();
                }
            }
            try {
                runBatch(rest, true); // finish() waits for it anyway: no hand-off to another thread
            } catch (RuntimeException | Error e) {
                // recorded as the step's failure; returned once no call runs
            }
        }
    }

    private void waitOnQueue() {
        try {
            queueLock.wait();
        } catch (InterruptedException e) {
            throw interruptedMidStep(e);
        }
    }

    /**
     * finish() interrupted while the step's collectives run: the interrupt status kept, the step
     * left as it is (reset, its late calls would count in the next step, which then waited for ever).
     */
    private BucketSyncException interruptedMidStep(InterruptedException e) {
        Thread.currentThread().interrupt();
        interruptedMidStep = true;
        return new BucketSyncException("interrupted while waiting for gradient buckets; the step's collectives go on:"
                + " call finish() again to end the step (or close())", e);
    }

    /**
     * Holding {@link #queueLock}: waits while buckets keep arriving less than the linger apart, until
     * every bucket of the step not yet started is queued. Arrivals do not wake this thread (that
     * would cost a wake-up per bucket); it rechecks when the linger since the latest one is over.
     */
    private void lingerForMore() {
        long linger = options.linger().toNanos();
        while (linger > 0 && !queued.isEmpty() && queued.size() < unstarted) {
            long left = lastQueued + linger - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                queueLock.wait(left / 1_000_000, (int) (left % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * The streams backward produces the gradients on, one per replica in device order (null: none,
     * the synchronizer then waits for the whole devices). Each bucket's average is then ordered
     * after the work queued on its replica's stream when the bucket was marked ready, and work
     * queued there after {@link #finish()} runs after every average. Call between steps.
     *
     * @throws IllegalArgumentException when the list does not have one stream per device, of that device
     */
    public synchronized void useStreams(List<? extends DeviceStream> perReplica) {
        if (perReplica == null) {
            streams = null;
            return;
        }
        List<? extends Device> devices = buckets.devices();
        if (perReplica.size() != devices.size()) {
            throw new IllegalArgumentException("useStreams: expected one stream per device (" + devices.size() + "), got "
                    + perReplica.size());
        }
        for (int r = 0; r < devices.size(); r++) {
            DeviceStream st = Objects.requireNonNull(perReplica.get(r), "stream of replica " + r);
            Device expected = devices.get(r);
            if (st.device() != expected) {
                // equal ids: two device objects of one device (another createDevices / logicalDevices call)
                throw new IllegalArgumentException("useStreams: stream " + r + " is a stream of " + st.device().id()
                        + (st.device().id().equals(expected.id())
                                ? ", a different device object than the buckets' " + expected.id()
                                        + " (a device of another createDevices / logicalDevices call?): use the buckets' own devices"
                                : ", but replica " + r + " is on " + expected.id()));
            }
        }
        streams = List.copyOf(perReplica);
    }

    private List<Replica> onStreams(List<Replica> replicas) {
        List<DeviceStream> s = streams;
        if (s == null) {
            return replicas;
        }
        List<Replica> out = new ArrayList<>(replicas.size());
        for (int r = 0; r < replicas.size(); r++) {
            out.add(replicas.get(r).withStream(s.get(r)));
        }
        return out;
    }

    /**
     * Sharded training's last step: every replica's shard of every bucket of {@code parameters}
     * (stepped by its optimizer) copied to every other replica, in one call, ordered on the streams
     * of {@link #useStreams} where given. Between steps.
     *
     * @throws IllegalStateException    when these buckets are not sharded, or a step is under way
     * @throws IllegalArgumentException when {@code parameters} does not have the gradient buckets'
     *                                  layout ({@link GradientBuckets#sameLayout()})
     */
    public synchronized void allGather(GradientBuckets parameters) {
        synchronizer.allGather(gatherReplicas(parameters));
    }

    /**
     * As {@link #allGather}, returning once the all-gather is queued, so that the next step's
     * forward can be queued behind it (on the streams of {@link #useStreams}) or overlap it; await
     * the handle before reading the parameters on the host.
     */
    public synchronized SyncHandle allGatherAsync(GradientBuckets parameters) {
        return synchronizer.allGatherAsync(gatherReplicas(parameters));
    }

    /** The checked parameter buckets as one replica per device, each bucket a gradient of its own. */
    private List<Replica> gatherReplicas(GradientBuckets parameters) {
        checkOpen();
        if (!sharded) {
            throw new IllegalStateException("allGather: the gradient buckets are not sharded (GradientBuckets.Builder.sharded), "
                    + "so every replica already holds every average; step the whole parameters instead");
        }
        if (parameters == buckets || !parameters.hasLayoutOf(buckets)) {
            throw new IllegalArgumentException("allGather: the parameters need a bucket set of their own with the gradient buckets' "
                    + "layout (gradientBuckets.sameLayout()), so that their shards line up");
        }
        if (readyCount > 0) {
            throw new IllegalStateException("allGather: a step is under way (" + readyCount + " parameter(s) marked ready); finish it first");
        }
        List<Integer> all = new ArrayList<>();
        for (GradientBuckets.Bucket b : parameters.buckets()) {
            all.add(b.index());
        }
        return onStreams(BatchReplicas.perBucket(parameters, all));
    }

    /** Marks every parameter not yet marked in this step. */
    public synchronized void markAllReady() {
        for (int p = 0; p < ready.length; p++) {
            if (!ready[p]) {
                markReady(p);
            }
        }
    }

    /** The synchronous path: marks everything ready and finishes. */
    public synchronized StepResult synchronize() {
        markAllReady();
        return finish();
    }

    /**
     * Waits for every bucket's all-reduce, runs the norm / finite / clipping pass if asked, and
     * starts the next step.
     *
     * @throws IllegalStateException  naming the parameters not marked ready (nothing is waited
     *                                for or changed: mark them and call again)
     * @throws BucketSyncException    when a collective failed; the step is over either way. Also
     *                                when the thread is interrupted while the collectives run (its
     *                                interrupt status kept): then the step is not over, they go on;
     *                                call finish() again to end it, or close()
     */
    public synchronized StepResult finish() {
        checkOpen();
        if (readyCount != ready.length) {
            List<String> missing = new ArrayList<>();
            for (int p = 0; p < ready.length; p++) {
                if (!ready[p]) {
                    missing.add(buckets.parameters().get(p));
                }
            }
            throw new IllegalStateException("finish: " + missing.size() + " parameter(s) not marked ready: "
                    + GradientBuckets.summary(missing));
        }
        long waitStart = System.nanoTime();
        interruptedMidStep = false; // a call after an interrupted one goes on with the same step
        try {
            Throwable failure = coalesce ? awaitBuckets() : null;
            for (Future<?> f : inFlight) { // wait for all, even after a failure: none may run into the next step
                try {
                    f.get();
                } catch (ExecutionException e) {
                    failure = failure == null ? e.getCause() : failure;
                } catch (InterruptedException e) {
                    throw interruptedMidStep(e);
                }
            }
            synchronized (handles) {
                for (SyncHandle h : handles) { // all of them, even after a failure
                    try {
                        h.await();
                    } catch (RuntimeException e) {
                        if (Thread.currentThread().isInterrupted()) { // the wait was cut short, not the call
                            throw interruptedMidStep(new InterruptedException(e.getMessage()));
                        }
                        failure = failure == null ? e : failure;
                    }
                }
            }
            if (failure != null) {
                throw new BucketSyncException((sharded ? "reduce-scatter" : "all-reduce") + " of a gradient bucket failed: "
                        + failure.getMessage(), failure);
            }
            boolean finite = true;
            double norm = Double.NaN;
            double scale = 1;
            if (options.needsNorm()) {
                double sumSquares = 0;
                if (fused != null) {
                    for (double b : bucketSquares) { // bucket order: the same bits whatever the calls were
                        sumSquares += b;
                    }
                } else {
                    sumSquares = norms.sumOfSquares(synchronizer);
                }
                norm = Math.sqrt(sumSquares);
                finite = Double.isFinite(sumSquares);
                if (finite && options.maxNorm() > 0 && norm > options.maxNorm()) {
                    // same rule as torch.nn.utils.clip_grad_norm_: the epsilon keeps the result just under maxNorm
                    scale = options.maxNorm() / (norm + 1e-6);
                    norms.scaleAll((float) scale);
                }
            }
            long end = System.nanoTime();
            return new StepResult(finite, norm, scale, end - firstStart, end - waitStart);
        } finally {
            if (!interruptedMidStep) {
                resetStep();
            }
        }
    }

    private void resetStep() {
        Arrays.fill(ready, false);
        readyCount = 0;
        inFlight.clear();
        handles.clear();
        started = false;
        synchronized (queueLock) {
            queued.clear();
            draining = false;
            unstarted = buckets.buckets().size();
            completed = 0;
            stepFailure = null;
        }
        for (GradientBuckets.Bucket b : buckets.buckets()) {
            pending[b.index()] = b.parameters().size();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("bucket sync is closed");
        }
    }

    /**
     * Stops the background thread after the collectives already started, waits until they are done
     * (a step left unfinished still has calls moving the buckets' memory, which the caller may free
     * next), and frees staging memory. An unfinished step's failure is not reported: nobody asked
     * for its result.
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            executor.shutdown();
            try {
                executor.awaitTermination(java.time.Duration.ofMinutes(10).toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (handles) {
                for (SyncHandle h : handles) {
                    try {
                        h.await();
                    } catch (RuntimeException e) {
                        // the abandoned step's call failed; its buckets are the caller's to discard
                    }
                }
                handles.clear();
            }
            norms.close();
        }
    }
}
