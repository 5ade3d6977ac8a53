package io.gradsync.sync;

/**
 * Tuning of the {@code ptx} backend.
 *
 * @param oneShotMaxBytes runs (back-to-back gradients) of at most this many bytes per replica are
 *                        averaged one-shot (GPU i averages slice i of every replica, reading the
 *                        peers, and writes it into every replica): one kernel per GPU and no second
 *                        phase instead of a reduce-scatter plus N-1 peer copies, which wins while
 *                        latency, not bandwidth, sets the time. 0 turns one-shot off; {@code Long.MAX_VALUE}
 *                        uses it always. The default is a first estimate from the link figures
 *                        (NVLink ~390 GB/s, a launch or peer copy ~5 us); measure with the bench's
 *                        sweep of this option and set the crossover found on the node.
 * @param peerAccess      use direct peer access where a pair of GPUs supports it; false forces every
 *                        pair through pinned host memory (the path taken where P2P is missing), so
 *                        that path can be tested on a machine with P2P
 * @param gather          how a GPU fetches the peers' averaged slices in the all-gather
 * @param gatherLanes     streams per GPU that pull the peers' averaged slices in the all-gather
 *                        (1..7; capped at N-1): with more than one, slices from different peers move
 *                        at once on several copy engines instead of one after another
 * @param graph           capture each layout's schedule (every GPU's copies, kernels and event
 *                        waits) once as a CUDA graph and replay it with one launch per call; false
 *                        enqueues every operation every call (tens of driver calls), for comparison
 *
 * <p>Immutable: safe to share between threads.
 */
public record PtxOptions(long oneShotMaxBytes, boolean peerAccess, Gather gather, boolean graph, int gatherLanes) {

    /** How the all-gather moves an averaged slice from its GPU to a peer. */
    public enum Gather {
        /** {@code cuMemcpyPeerAsync} pulled by the receiving GPU: copy engines, SMs stay free. */
        COPY_ENGINE,
        /** A copy kernel on the receiving GPU reading the peer's memory: SMs, no copy-engine latency. */
        KERNEL
    }
    /** Default of {@link #oneShotMaxBytes()}: 1 MiB, to be replaced by the measured crossover. */
    public static final long DEFAULT_ONE_SHOT_MAX_BYTES = 1L << 20;

    public PtxOptions {
        java.util.Objects.requireNonNull(gather, "gather");
        if (gatherLanes < 1 || gatherLanes > 7) {
            throw new IllegalArgumentException("gatherLanes must be 1..7, got " + gatherLanes);
        }
        if (oneShotMaxBytes < 0) {
            throw new IllegalArgumentException("oneShotMaxBytes must be >= 0, got " + oneShotMaxBytes);
        }
    }

    public static PtxOptions defaults() {
        return new PtxOptions(DEFAULT_ONE_SHOT_MAX_BYTES, true, Gather.COPY_ENGINE, true, 1);
    }

    public PtxOptions withOneShotMaxBytes(long bytes) {
        return new PtxOptions(bytes, peerAccess, gather, graph, gatherLanes);
    }

    public PtxOptions withPeerAccess(boolean enabled) {
        return new PtxOptions(oneShotMaxBytes, enabled, gather, graph, gatherLanes);
    }

    public PtxOptions withGather(Gather how) {
        return new PtxOptions(oneShotMaxBytes, peerAccess, how, graph, gatherLanes);
    }

    public PtxOptions withGraph(boolean enabled) {
        return new PtxOptions(oneShotMaxBytes, peerAccess, gather, enabled, gatherLanes);
    }

    public PtxOptions withGatherLanes(int lanes) {
        return new PtxOptions(oneShotMaxBytes, peerAccess, gather, graph, lanes);
    }
}
