package io.gradsync.cli;

import io.gradsync.bench.Sizes;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.SyncOptions;
import java.util.Locale;
import picocli.CommandLine.Option;

/** The {@code ptx} backend's options: the one-shot and one-GPU thresholds, the all-gather, peer access and the recorded graphs. */
final class PtxOptionsMixin implements BackendOptions<PtxOptions> {
    @Option(names = "--ptx-one-shot", paramLabel = "SIZE", description = "ptx backend: runs up to this size are averaged "
            + "one-shot (each GPU writes its slice's average into every replica) instead of reduce-scatter + all-gather; sweep it to find the crossover (default: 1M).")
    String ptxOneShot;

    @Option(names = "--ptx-one-gpu", paramLabel = "SIZE", description = "ptx backend: calls whose runs are all one-shot and "
            + "hold up to this size per replica are averaged by the first GPU alone (no fork across GPUs); 0 turns it off; "
            + "sweep it on several GPUs to find the crossover (default: 64K).")
    String ptxOneGpu;

    @Option(names = "--ptx-gather", paramLabel = "HOW", description = "ptx backend: all-gather with copy-engine "
            + "(cuMemcpyPeerAsync) or kernel (a copy kernel reading the peer) (default: copy-engine).")
    String ptxGather;

    @Option(names = "--ptx-no-peer", negatable = false, description = "ptx backend: move slices through pinned host "
            + "memory as where GPUs have no P2P (tests that path).")
    boolean ptxNoPeer;

    @Option(names = "--ptx-gather-lanes", paramLabel = "N", description = "ptx backend: streams per GPU pulling the "
            + "peers' slices in the all-gather, 1..7, capped at devices - 1 (default: 1).")
    Integer ptxGatherLanes;

    @Option(names = "--ptx-no-graph", negatable = false, description = "ptx backend: enqueue every copy, kernel and "
            + "event wait on every call instead of replaying the schedule captured once as a CUDA graph.")
    boolean ptxNoGraph;

    @Override
    public SyncOptions applyTo(SyncOptions o) {
        return o.withPtx(apply(o.ptx()));
    }

    @Override
    public PtxOptions apply(PtxOptions p) {
        if (ptxOneShot != null) {
            p = BackendOptions.with(p, "--ptx-one-shot", x -> x.withOneShotMaxBytes(ptxOneShot.trim().equals("0") ? 0
                    : Sizes.parse(ptxOneShot)));
        }
        if (ptxOneGpu != null) {
            p = BackendOptions.with(p, "--ptx-one-gpu", x -> x.withOneGpuMaxBytes(ptxOneGpu.trim().equals("0") ? 0
                    : Sizes.parse(ptxOneGpu)));
        }
        if (ptxGather != null) {
            p = p.withGather(switch (ptxGather.trim().toLowerCase(Locale.ROOT)) {
                case "copy-engine" -> PtxOptions.Gather.COPY_ENGINE;
                case "kernel" -> PtxOptions.Gather.KERNEL;
                default -> throw new IllegalArgumentException("--ptx-gather: '" + ptxGather + "' is neither copy-engine nor kernel");
            });
        }
        if (ptxNoPeer) {
            p = p.withPeerAccess(false);
        }
        if (ptxNoGraph) {
            p = p.withGraph(false);
        }
        if (ptxGatherLanes != null) {
            if (ptxGatherLanes < 1 || ptxGatherLanes > 7) {
                throw new IllegalArgumentException("--ptx-gather-lanes must be 1..7, got " + ptxGatherLanes);
            }
            p = p.withGatherLanes(ptxGatherLanes);
        }
        return p;
    }
}
