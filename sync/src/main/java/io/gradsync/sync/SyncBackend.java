package io.gradsync.sync;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How gradients are averaged. Parsed from the strings users type on command lines and in configs.
 *
 * <p>Immutable: safe to share between threads.
 */
public enum SyncBackend {
    /** One replica: nothing to average, nothing moves. */
    SINGLE("single", "none"),
    /** Host staging: copy to pinned host memory, average on all cores, copy back. */
    CPU("cpu", "cpu-staging", "cpu_staging"),
    /** The project's Java kernels compiled to PTX, GPUs reading their peers' memory. */
    PTX("ptx"),
    /** The project's Java kernels as OpenCL C, slices moving through host memory. */
    OPENCL("opencl"),
    /** NCCL's all-reduce through the JNI shim. */
    NCCL("nccl"),
    /** The fastest backend this machine supports. */
    AUTO("auto");

    private final List<String> names;

    SyncBackend(String... names) {
        this.names = List.of(names);
    }

    /** The canonical name, as {@link #parse} accepts it and as listings print it. */
    public String label() {
        return names.getFirst();
    }

    public List<String> aliases() {
        return names;
    }

    /**
     * Case-insensitive, surrounding blanks ignored.
     *
     * @throws IllegalArgumentException naming the bad value and listing the valid ones
     */
    public static SyncBackend parse(String text) {
        if (text != null) {
            String key = text.trim().toLowerCase(Locale.ROOT);
            for (SyncBackend b : values()) {
                if (b.names.contains(key)) {
                    return b;
                }
            }
        }
        throw new IllegalArgumentException("unknown sync backend '" + text + "'; valid: " + validNames());
    }

    /** Every accepted spelling, canonical names first with their aliases in parentheses. */
    public static String validNames() {
        return Arrays.stream(values())
                .map(b -> b.names.size() == 1 ? b.label()
                        : b.label() + " (" + String.join(", ", b.names.subList(1, b.names.size())) + ")")
                .collect(Collectors.joining(", "));
    }
}
