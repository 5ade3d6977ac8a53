package io.gradsync.cli;

import io.gradsync.sync.NcclOptions;
import io.gradsync.sync.SyncOptions;
import java.util.Locale;
import picocli.CommandLine.Option;

/** The {@code nccl} backend's options: when ranks compare layouts, and how long a call may take. */
final class NcclOptionsMixin implements BackendOptions<NcclOptions> {
    @Option(names = "--layout-check", paramLabel = "WHEN", description = "nccl, one process per GPU: compare gradient "
            + "layouts across ranks every-call (one tiny extra all-reduce per call) or on-change (default: every-call).")
    String layoutCheck;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "nccl: fail a call that takes longer, "
            + "aborting the communicators (default: 300).")
    Integer timeoutSeconds;

    @Override
    public SyncOptions applyTo(SyncOptions o) {
        return o.withNccl(apply(o.nccl()));
    }

    @Override
    public NcclOptions apply(NcclOptions o) {
        if (layoutCheck != null) {
            o = o.withLayoutCheck(switch (layoutCheck.trim().toLowerCase(Locale.ROOT)) {
                case "every-call" -> SyncOptions.LayoutCheck.EVERY_CALL;
                case "on-change" -> SyncOptions.LayoutCheck.ON_CHANGE;
                default -> throw new IllegalArgumentException("--layout-check: '" + layoutCheck
                        + "' is neither every-call nor on-change");
            });
        }
        if (timeoutSeconds != null) {
            if (timeoutSeconds < 1) {
                throw new IllegalArgumentException("--timeout must be at least 1 second, got " + timeoutSeconds);
            }
            o = o.withTimeout(java.time.Duration.ofSeconds(timeoutSeconds));
        }
        return o;
    }
}
