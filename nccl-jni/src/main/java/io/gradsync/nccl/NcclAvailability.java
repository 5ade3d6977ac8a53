package io.gradsync.nccl;

import java.util.List;
import java.util.Optional;

/**
 * Whether NCCL could be loaded in this JVM, and why not. Made once, on first use of
 * {@link Nccl}; never null, never thrown.
 */
public final class NcclAvailability {
    private final boolean available;
    private final String reason;
    private final String library;
    private final String librarySource;
    private final String loadedFrom;
    private final NcclVersion version;
    private final List<String> missingSymbols;
    private final boolean shimLoaded;

    NcclAvailability(boolean available, String reason, String library, String librarySource, String loadedFrom,
                     NcclVersion version, List<String> missingSymbols, boolean shimLoaded) {
        this.available = available;
        this.reason = reason;
        this.library = library;
        this.librarySource = librarySource;
        this.loadedFrom = loadedFrom;
        this.version = version;
        this.missingSymbols = List.copyOf(missingSymbols);
        this.shimLoaded = shimLoaded;
    }

    /** True where NCCL is loaded and answers {@code ncclGetVersion}. */
    public boolean isAvailable() {
        return available;
    }

    /**
     * Why NCCL is not available (the library name tried, where that name came from, and the
     * dlopen error), or, where it is, which NCCL was loaded from where.
     */
    public String reason() {
        return reason;
    }

    /** The library name or path given to dlopen, e.g. {@code libnccl.so.2}. */
    public String library() {
        return library;
    }

    /** Where {@link #library()} came from: the system property, the environment variable, or the default. */
    public String librarySource() {
        return librarySource;
    }

    /** The file NCCL was actually loaded from. */
    public Optional<String> loadedFrom() {
        return Optional.ofNullable(loadedFrom);
    }

    /** NCCL's version where available. */
    public Optional<NcclVersion> version() {
        return Optional.ofNullable(version);
    }

    /** NCCL functions this binding wraps that the loaded library lacks (an older NCCL); they fail when used. */
    public List<String> missingSymbols() {
        return missingSymbols;
    }

    /** Whether the JNI shim itself loaded (package use: tests and diagnostics). */
    boolean shimLoaded() {
        return shimLoaded;
    }

    @Override
    public String toString() {
        return (available ? "NCCL available: " : "NCCL not available: ") + reason;
    }
}
