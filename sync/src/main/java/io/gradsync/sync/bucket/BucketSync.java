package io.gradsync.sync.bucket;

import io.gradsync.sync.FusedSumOfSquares;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
 * <p>Collectives run on one background thread, one call after another: a synchronizer is one
 * ordered stream of collectives (its calls are serialized anyway), and a single thread keeps the
 * same order on every rank. The caller's thread never blocks in {@code markReady}. When every
 * replica lives in this process, the buckets that became ready while a call was running go
 * together in the next call (one collective call for several buckets): a call has a fixed cost
 * (waiting for the devices, launching, waiting for the result) that ten 25 MiB buckets would
 * otherwise pay ten times. Across processes each bucket keeps its own call, since when buckets
 * become ready differs between ranks and every rank must make the same calls.
 *
 * <p>Optional, in {@code finish()}: the global L2 norm over all buckets (float64 accumulation), a
 * finite check (the norm is finite exactly when every element is), and clipping to
 * {@link Options#maxNorm()}. Where the backend averages on the host ({@code cpu},
 * {@link FusedSumOfSquares}) the squares are summed in the averaging pass itself, bucket by bucket,
 * and added in bucket order (the same bits however the buckets were grouped into calls). Elsewhere
 * it is a second pass once all buckets are averaged: on JVM devices over the buckets where they
 * are, on CUDA and OpenCL devices with the built-in sum-of-squares kernel on the bucket memory (see
 * {@code BucketNorms}). Clipping scales every bucket afterwards, since its factor needs the whole norm.
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
    private final Options options;
    private final BucketNorms norms;
    private final ExecutorService executor;
    private final int[] pending;           // parameters not yet ready, per bucket
    private final Set<String> ready = new HashSet<>();
    private final List<Future<?>> inFlight = new ArrayList<>();
    /** Single process: ready buckets not yet started, taken together by the next call. */
    private final List<Integer> queued = new ArrayList<>();
    /** Guards {@link #queued} and {@link #draining}: not the instance lock, which finish() holds while it waits for the drain. */
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
    /** When the last bucket was queued (System.nanoTime), for the linger. */
    private long lastQueued;
    /** Buckets of this step not yet taken into a call: once all are queued, nothing is worth waiting for. */
    private int unstarted;
    private long firstStart;
    private boolean closed;

    public BucketSync(GradientBuckets buckets, GradientSynchronizer synchronizer, Options options) {
        this.buckets = Objects.requireNonNull(buckets, "buckets");
        this.synchronizer = Objects.requireNonNull(synchronizer, "synchronizer");
        this.options = Objects.requireNonNull(options, "options");
        this.norms = new BucketNorms(buckets);
        this.pending = new int[buckets.buckets().size()];
        this.coalesce = synchronizer.worldSize() == buckets.devices().size();
        this.fused = options.needsNorm() && coalesce && synchronizer.worldSize() > 1
                && synchronizer instanceof FusedSumOfSquares f ? f : null;
        this.bucketSquares = new double[buckets.buckets().size()];
        this.executor = Executors.newSingleThreadExecutor(r -> {
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
     * bucket, that bucket's all-reduce starts in the background.
     *
     * @throws IllegalArgumentException for an unknown parameter
     * @throws IllegalStateException    when it was already marked in this step
     */
    public synchronized void markReady(String parameter) {
        checkOpen();
        GradientBuckets.Bucket bucket = buckets.bucketOf(parameter);
        if (!ready.add(parameter)) {
            throw new IllegalStateException("parameter '" + parameter + "' is already marked ready in this step");
        }
        if (--pending[bucket.index()] == 0) {
            if (inFlight.isEmpty()) {
                firstStart = System.nanoTime();
            }
            if (!coalesce) {
                inFlight.add(executor.submit(() -> synchronizer.synchronize(buckets.bucketReplicas(bucket.index()))));
            } else {
                synchronized (queueLock) {
                    queued.add(bucket.index());
                    lastQueued = System.nanoTime();
                    queueLock.notifyAll();
                    if (!draining) {
                        draining = true;
                        inFlight.add(executor.submit(this::drain));
                    }
                }
            }
        }
    }

    /** Background: synchronizes everything queued, in calls of all buckets queued at the time, until none is left. */
    private void drain() {
        while (true) {
            List<Integer> batch;
            synchronized (queueLock) {
                if (queued.isEmpty()) {
                    draining = false;
                    return;
                }
                lingerForMore();
                batch = List.copyOf(queued);
                queued.clear();
                unstarted -= batch.size();
            }
            try {
                List<Replica> replicas = batch.size() == 1 ? buckets.bucketReplicas(batch.getFirst()) : merged(batch);
                if (fused != null) {
                    double[] squares = fused.synchronizeSumOfSquares(replicas); // one per bucket, in batch order
                    for (int i = 0; i < batch.size(); i++) {
                        bucketSquares[batch.get(i)] = squares[i];
                    }
                } else {
                    synchronizer.synchronize(replicas);
                }
            } catch (RuntimeException | Error e) {
                synchronized (queueLock) {
                    draining = false; // the step has failed; finish() reports it and resets
                }
                throw e;
            }
        }
    }

    /**
     * Holding {@link #queueLock}: waits while buckets keep arriving less than the linger apart, until
     * every bucket of the step not yet started is queued.
     */
    private void lingerForMore() {
        long linger = options.linger().toNanos();
        while (linger > 0 && queued.size() < unstarted) {
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

    /** One replica per device holding the buckets' gradients, in the order they became ready. */
    private List<Replica> merged(List<Integer> batch) {
        List<Replica> out = new ArrayList<>();
        for (int r = 0; r < buckets.devices().size(); r++) {
            List<Gradient> grads = new ArrayList<>(batch.size());
            for (int b : batch) {
                grads.add(buckets.bucketReplicas(b).get(r).gradients().getFirst());
            }
            out.add(new Replica(buckets.devices().get(r), grads));
        }
        return out;
    }

    /** Marks every parameter not yet marked in this step. */
    public synchronized void markAllReady() {
        for (String p : buckets.parameters()) {
            if (!ready.contains(p)) {
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
     * @throws BucketSyncException    when a collective failed; the step is over either way
     */
    public synchronized StepResult finish() {
        checkOpen();
        if (ready.size() != buckets.parameters().size()) {
            List<String> missing = buckets.parameters().stream().filter(p -> !ready.contains(p)).toList();
            throw new IllegalStateException("finish: " + missing.size() + " parameter(s) not marked ready: "
                    + GradientBuckets.summary(missing));
        }
        long waitStart = System.nanoTime();
        try {
            Throwable failure = null;
            for (Future<?> f : inFlight) { // wait for all, even after a failure: none may run into the next step
                try {
                    f.get();
                } catch (ExecutionException e) {
                    failure = failure == null ? e.getCause() : failure;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new BucketSyncException("interrupted while waiting for gradient buckets", e);
                }
            }
            if (failure != null) {
                throw new BucketSyncException("all-reduce of a gradient bucket failed: " + failure.getMessage(), failure);
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
                    sumSquares = norms.sumOfSquares();
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
            resetStep();
        }
    }

    private void resetStep() {
        ready.clear();
        inFlight.clear();
        synchronized (queueLock) {
            queued.clear();
            draining = false;
            unstarted = buckets.buckets().size();
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

    /** Stops the background thread after the collectives already started; frees staging memory. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            executor.shutdown();
            try {
                executor.awaitTermination(java.time.Duration.ofMinutes(10).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            norms.close();
        }
    }
}
