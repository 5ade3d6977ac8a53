package io.gradsync.sync;

import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of the synchronizers.
 *
 * @param chunkBytes  host staging: bytes per replica moved and reduced as one pipeline step
 * @param slots       host staging: chunks in flight per replica (the ring of pinned slots)
 * @param threads     host staging: threads that sum on the host
 * @param timeout     nccl: how long a collective, a barrier or the rendezvous may take before the
 *                    communicators are aborted and the call fails (a rank died or never came)
 * @param layoutCheck nccl, one process per GPU: when the ranks compare their gradient layouts
 * @param ptx         ptx: one-shot threshold and peer access ({@link PtxOptions})
 * @param openClStepBytes opencl: bytes per replica slice moved and averaged as one pipeline step.
 *                    Larger than host staging's chunks: every step costs several enqueues and
 *                    cross-queue events, which NVIDIA's OpenCL makes expensive (on 2 x H200 at 256 MiB:
 *                    2 MiB steps 12.9 GB/s, 8 MiB 26.9, 32 MiB 29.0)
 * @param waitForCaller every backend: before averaging, wait for all work queued on the devices
 *                    (one device-wide wait per device and call), so that work still writing the
 *                    gradients finishes first. Off only where the caller knows its device work is
 *                    done, e.g. after {@code ExecutionPlan.execute}, which returns once its device
 *                    work has finished: it saves that wait (several microseconds per GPU), which
 *                    dominates small calls
 *
 * <p>Thread-safety: immutable (every {@code with...} returns a new record); share it freely.
 */
public record SyncOptions(long chunkBytes, int slots, int threads, Duration timeout, LayoutCheck layoutCheck,
        PtxOptions ptx, long openClStepBytes, boolean waitForCaller) {

    /** Default of {@link #openClStepBytes()}: the best of the sweep above. */
    public static final long DEFAULT_OPENCL_STEP_BYTES = 32L << 20;

    /** Default of {@link #timeout()}: long enough for NCCL's first-call connection setup on a busy node. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

    /** When ranks of a multi-process synchronizer compare their gradient layouts before a collective. */
    public enum LayoutCheck {
        /** Before every collective: one tiny extra all-reduce per call; a mismatch always fails clearly. */
        EVERY_CALL,
        /**
         * Only when this rank's layout differs from the one last agreed on: no extra collective in a
         * steady training loop. A rank whose layout changes alone leaves the others in a mismatched
         * collective, which then fails by {@link #timeout()} rather than with a message naming the layout.
         */
        ON_CHANGE
    }

    /**
     * 2 MiB chunks, 24 in flight, up to 24 threads: the best of the sweep on 4 x H200 (see
     * bench/RESULTS.md). More threads only contend for host memory bandwidth and the driver.
     * NCCL: 5 minute timeout, layouts checked every call.
     */
    public static SyncOptions defaults() {
        return new SyncOptions(2L << 20, 24, Math.min(24, Runtime.getRuntime().availableProcessors()));
    }

    public SyncOptions {
        if (chunkBytes < 4096 || chunkBytes % 64 != 0) {
            throw new IllegalArgumentException("chunkBytes must be >= 4096 and a multiple of 64, got " + chunkBytes);
        }
        if (slots < 2) {
            throw new IllegalArgumentException("slots must be >= 2 so that copies overlap the sum, got " + slots);
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(layoutCheck, "layoutCheck");
        Objects.requireNonNull(ptx, "ptx");
        if (openClStepBytes < 4096 || openClStepBytes % 64 != 0) {
            throw new IllegalArgumentException("openClStepBytes must be >= 4096 and a multiple of 64, got " + openClStepBytes);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }

    /** Everything but the ptx options, which take their defaults. */
    public SyncOptions(long chunkBytes, int slots, int threads, Duration timeout, LayoutCheck layoutCheck) {
        this(chunkBytes, slots, threads, timeout, layoutCheck, PtxOptions.defaults(), DEFAULT_OPENCL_STEP_BYTES, true);
    }

    /** The host-staging options with the default timeout and layout check. */
    public SyncOptions(long chunkBytes, int slots, int threads) {
        this(chunkBytes, slots, threads, DEFAULT_TIMEOUT, LayoutCheck.EVERY_CALL);
    }

    public SyncOptions withChunkBytes(long bytes) {
        return new SyncOptions(bytes, slots, threads, timeout, layoutCheck, ptx, openClStepBytes, waitForCaller);
    }

    public SyncOptions withSlots(int count) {
        return new SyncOptions(chunkBytes, count, threads, timeout, layoutCheck, ptx, openClStepBytes, waitForCaller);
    }

    public SyncOptions withThreads(int count) {
        return new SyncOptions(chunkBytes, slots, count, timeout, layoutCheck, ptx, openClStepBytes, waitForCaller);
    }

    public SyncOptions withTimeout(Duration limit) {
        return new SyncOptions(chunkBytes, slots, threads, limit, layoutCheck, ptx, openClStepBytes, waitForCaller);
    }

    public SyncOptions withLayoutCheck(LayoutCheck check) {
        return new SyncOptions(chunkBytes, slots, threads, timeout, check, ptx, openClStepBytes, waitForCaller);
    }

    /** The ptx backend's options; the bench sweeps {@link PtxOptions#oneShotMaxBytes()} through this. */
    public SyncOptions withPtx(PtxOptions options) {
        return new SyncOptions(chunkBytes, slots, threads, timeout, layoutCheck, options, openClStepBytes, waitForCaller);
    }

    public SyncOptions withOpenClStepBytes(long bytes) {
        return new SyncOptions(chunkBytes, slots, threads, timeout, layoutCheck, ptx, bytes, waitForCaller);
    }

    /** See {@link #waitForCaller()}. */
    public SyncOptions withWaitForCaller(boolean wait) {
        return new SyncOptions(chunkBytes, slots, threads, timeout, layoutCheck, ptx, openClStepBytes, wait);
    }
}
