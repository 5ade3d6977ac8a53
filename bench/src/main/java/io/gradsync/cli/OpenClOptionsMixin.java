package io.gradsync.cli;

import io.gradsync.bench.Sizes;
import io.gradsync.sync.OpenClOptions;
import io.gradsync.sync.SyncOptions;
import picocli.CommandLine.Option;

/** The {@code opencl} backend's options: the bytes of a pipeline step. */
final class OpenClOptionsMixin implements BackendOptions<OpenClOptions> {
    @Option(names = "--opencl-step", paramLabel = "SIZE", description = "opencl backend: bytes per replica slice "
            + "per pipeline step (default: 32M).")
    String openClStep;

    @Override
    public SyncOptions applyTo(SyncOptions o) {
        return o.withOpenCl(apply(o.openCl()));
    }

    @Override
    public OpenClOptions apply(OpenClOptions o) {
        if (openClStep != null) {
            o = BackendOptions.with(o, "--opencl-step", x -> x.withStepBytes(Sizes.parse(openClStep)));
        }
        return o;
    }
}
