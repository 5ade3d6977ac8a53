package io.gradsync.sync;

/**
 * Tuning of the {@code ptx} backend.
 *
 * @param oneShotMaxBytes runs (back-to-back gradients) of at most this many bytes per replica are
 *                        averaged one-shot (every GPU averages the whole run, reading all peers, into
 *                        scratch, then copies it back): one kernel and one local copy instead of a
 *                        reduce-scatter plus N-1 peer copies, which wins while latency, not
 *                        bandwidth, sets the time. 0 turns one-shot off; {@code Long.MAX_VALUE}
 *                        uses it always. The default is a first estimate from the link figures
 *                        (NVLink ~390 GB/s, a launch or peer copy ~5 us); measure with the bench's
 *                        sweep of this option and set the crossover found on the node.
 * @param peerAccess      use direct peer access where a pair of GPUs supports it; false forces every
 *                        pair through pinned host memory (the path taken where P2P is missing), so
 *                        that path can be tested on a machine with P2P
 */
public record PtxOptions(long oneShotMaxBytes, boolean peerAccess) {
    /** Default of {@link #oneShotMaxBytes()}: 1 MiB, to be replaced by the measured crossover. */
    public static final long DEFAULT_ONE_SHOT_MAX_BYTES = 1L << 20;

    public PtxOptions {
        if (oneShotMaxBytes < 0) {
            throw new IllegalArgumentException("oneShotMaxBytes must be >= 0, got " + oneShotMaxBytes);
        }
    }

    public static PtxOptions defaults() {
        return new PtxOptions(DEFAULT_ONE_SHOT_MAX_BYTES, true);
    }

    public PtxOptions withOneShotMaxBytes(long bytes) {
        return new PtxOptions(bytes, peerAccess);
    }

    public PtxOptions withPeerAccess(boolean enabled) {
        return new PtxOptions(oneShotMaxBytes, enabled);
    }
}
