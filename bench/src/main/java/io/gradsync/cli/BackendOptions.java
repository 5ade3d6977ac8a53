package io.gradsync.cli;

import io.gradsync.sync.SyncOptions;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The command line's tuning options of one backend, as a picocli mixin: what it sets on that
 * backend's own options record (options left unset keep their values). A backend's options are
 * its own mixin class; a command lists the mixins it offers.
 *
 * @param <T> the backend's options type ({@code CpuOptions}, {@code PtxOptions} ...)
 */
interface BackendOptions<T> {

    /** {@code options} with this backend's options that were given applied; a bad value names its option. */
    T apply(T options);

    /** {@code options} with its part for this backend replaced by {@link #apply} of it. */
    SyncOptions applyTo(SyncOptions options);

    /** {@code change} applied to {@code options}; its IllegalArgumentException names {@code option}. */
    static <T> T with(T options, String option, UnaryOperator<T> change) {
        return prefixed(option, () -> change.apply(options));
    }

    static <T> T prefixed(String option, Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
        }
    }
}
