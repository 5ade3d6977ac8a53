package io.gradsync.sync;

/**
 * Tuning of the {@code opencl} backend.
 *
 * @param stepBytes bytes per replica slice moved and averaged as one pipeline step. Larger than host
 *                  staging's chunks: every step costs several enqueues and cross-queue events, which
 *                  NVIDIA's OpenCL makes expensive (on 2 x H200 at 256 MiB: 2 MiB steps 12.9 GB/s,
 *                  8 MiB 26.9, 32 MiB 29.0)
 *
 * <p>Thread-safety: immutable (every {@code with...} returns a new record); share it freely.
 */
public record OpenClOptions(long stepBytes) {

    /** Default of {@link #stepBytes()}: the best of the sweep above. */
    public static final long DEFAULT_STEP_BYTES = 32L << 20;

    public OpenClOptions {
        // named as SyncOptions has always named it, so that existing messages stay as they were
        if (stepBytes < 4096 || stepBytes % 64 != 0) {
            throw new IllegalArgumentException("openClStepBytes must be >= 4096 and a multiple of 64, got " + stepBytes);
        }
    }

    public static OpenClOptions defaults() {
        return new OpenClOptions(DEFAULT_STEP_BYTES);
    }

    public OpenClOptions withStepBytes(long bytes) {
        return new OpenClOptions(bytes);
    }
}
