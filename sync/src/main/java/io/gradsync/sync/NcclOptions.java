package io.gradsync.sync;

import io.gradsync.sync.SyncOptions.LayoutCheck;
import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of the {@code nccl} backend.
 *
 * @param timeout     how long a collective, a barrier or the rendezvous may take before the
 *                    communicators are aborted and the call fails (a rank died or never came). Only
 *                    nccl waits on other processes, so only nccl reads it
 * @param layoutCheck one process per GPU: when the ranks compare their gradient layouts
 *
 * <p>Thread-safety: immutable (every {@code with...} returns a new record); share it freely.
 */
public record NcclOptions(Duration timeout, LayoutCheck layoutCheck) {

    /** Default of {@link #timeout()}: long enough for NCCL's first-call connection setup on a busy node. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

    public NcclOptions {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(layoutCheck, "layoutCheck");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }

    /** A 5 minute timeout, layouts checked every call. */
    public static NcclOptions defaults() {
        return new NcclOptions(DEFAULT_TIMEOUT, LayoutCheck.EVERY_CALL);
    }

    public NcclOptions withTimeout(Duration limit) {
        return new NcclOptions(limit, layoutCheck);
    }

    public NcclOptions withLayoutCheck(LayoutCheck check) {
        return new NcclOptions(timeout, check);
    }
}
