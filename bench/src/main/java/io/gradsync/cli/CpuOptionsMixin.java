package io.gradsync.cli;

import io.gradsync.bench.Sizes;
import io.gradsync.sync.CpuOptions;
import io.gradsync.sync.SyncOptions;
import picocli.CommandLine.Option;

/** The {@code cpu} backend's options: its pipeline's chunks, slots and host threads. */
final class CpuOptionsMixin implements BackendOptions<CpuOptions> {
    @Option(names = "--chunk", paramLabel = "SIZE", description = "cpu backend: bytes per pipeline chunk (default: 2M).")
    String chunk;

    @Option(names = "--slots", paramLabel = "N", description = "cpu backend: chunks in flight per device (default: 24).")
    Integer slots;

    @Option(names = "--threads", paramLabel = "N", description = "cpu backend: host reduction threads (default: min(24, cores)).")
    Integer threads;

    @Override
    public SyncOptions applyTo(SyncOptions o) {
        return o.withCpu(apply(o.cpu()));
    }

    @Override
    public CpuOptions apply(CpuOptions o) {
        if (chunk != null) {
            o = BackendOptions.with(o, "--chunk", x -> x.withChunkBytes(Sizes.parse(chunk)));
        }
        if (slots != null) {
            o = BackendOptions.with(o, "--slots", x -> x.withSlots(slots));
        }
        if (threads != null) {
            o = BackendOptions.with(o, "--threads", x -> x.withThreads(threads));
        }
        return o;
    }
}
