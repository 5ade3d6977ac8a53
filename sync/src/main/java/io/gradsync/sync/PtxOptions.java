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
 * @param oneGpuMaxBytes  a call whose runs are all one-shot and hold at most this many bytes per replica
 *                        in all is averaged by the first GPU alone ({@code averageInPlace<N>} over each
 *                        whole run, reading and writing every replica through P2P): one kernel per run
 *                        and no fork across GPUs, which costs the host less per call where the GPU
 *                        moves few bytes over its links. Replicas that are all logical devices of the
 *                        first GPU's chip cross no link: every one-shot call of theirs is averaged so
 *                        while this is above 0. 0 turns it off everywhere.
 * @param graph           capture each layout's schedule (every GPU's copies, kernels and event
 *                        waits) once as a CUDA graph and replay it with one launch per call; false
 *                        enqueues every operation every call (tens of driver calls), for comparison
 *
 * <p>Immutable: safe to share between threads.
 */
public record PtxOptions(long oneShotMaxBytes, boolean peerAccess, Gather gather, boolean graph, int gatherLanes, long oneGpuMaxBytes) {

    /** How the all-gather moves an averaged slice from its GPU to a peer. */
    public enum Gather {
        /** {@code cuMemcpyPeerAsync} pulled by the receiving GPU: copy engines, SMs stay free. */
        COPY_ENGINE,
        /** A copy kernel on the receiving GPU reading the peer's memory: SMs, no copy-engine latency. */
        KERNEL
    }
    /** Default of {@link #oneShotMaxBytes()}: 1 MiB, to be replaced by the measured crossover. */
    public static final long DEFAULT_ONE_SHOT_MAX_BYTES = 1L << 20;
    /** Default of {@link #oneGpuMaxBytes()}: 64 KiB, an estimate (a few microseconds over NVLink or PCIe 5) until measured on several GPUs. */
    public static final long DEFAULT_ONE_GPU_MAX_BYTES = 64L << 10;

    public PtxOptions {
        java.util.Objects.requireNonNull(gather, "gather");
        if (gatherLanes < 1 || gatherLanes > 7) {
            throw new IllegalArgumentException("gatherLanes must be 1..7, got " + gatherLanes);
        }
        if (oneShotMaxBytes < 0) {
            throw new IllegalArgumentException("oneShotMaxBytes must be >= 0, got " + oneShotMaxBytes);
        }
        if (oneGpuMaxBytes < 0) {
            throw new IllegalArgumentException("oneGpuMaxBytes must be >= 0, got " + oneGpuMaxBytes);
        }
    }

    /** The options before {@link #oneGpuMaxBytes()} existed, with its default. */
    public PtxOptions(long oneShotMaxBytes, boolean peerAccess, Gather gather, boolean graph, int gatherLanes) {
        this(oneShotMaxBytes, peerAccess, gather, graph, gatherLanes, DEFAULT_ONE_GPU_MAX_BYTES);
    }

    public static PtxOptions defaults() {
        return new PtxOptions(DEFAULT_ONE_SHOT_MAX_BYTES, true, Gather.COPY_ENGINE, true, 1, DEFAULT_ONE_GPU_MAX_BYTES);
    }

    public PtxOptions withOneShotMaxBytes(long bytes) {
        return new PtxOptions(bytes, peerAccess, gather, graph, gatherLanes, oneGpuMaxBytes);
    }

    public PtxOptions withPeerAccess(boolean enabled) {
        return new PtxOptions(oneShotMaxBytes, enabled, gather, graph, gatherLanes, oneGpuMaxBytes);
    }

    public PtxOptions withGather(Gather how) {
        return new PtxOptions(oneShotMaxBytes, peerAccess, how, graph, gatherLanes, oneGpuMaxBytes);
    }

    public PtxOptions withGraph(boolean enabled) {
        return new PtxOptions(oneShotMaxBytes, peerAccess, gather, enabled, gatherLanes, oneGpuMaxBytes);
    }

    public PtxOptions withGatherLanes(int lanes) {
        return new PtxOptions(oneShotMaxBytes, peerAccess, gather, graph, lanes, oneGpuMaxBytes);
    }

    public PtxOptions withOneGpuMaxBytes(long bytes) {
        return new PtxOptions(oneShotMaxBytes, peerAccess, gather, graph, gatherLanes, bytes);
    }
}
