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
    /**
     * A backend usable for the given devices, by a fixed order rather than by measuring: {@code single}
     * for one device; for several CUDA GPUs {@code nccl} where NCCL loads (and no two are logical
     * devices of one GPU), else {@code ptx} where every pair has peer access (at most 8 GPUs); else
     * {@code cpu}. Never {@code opencl}. As one rank of a multi-process job ({@code WORLD_SIZE} above
     * 1), only {@code nccl}. Not always the fastest: in one process on 2 x H200, {@code ptx} beat
     * {@code nccl} at every size (the README's backend table).
     */
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
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("no sync backend given (" + (text == null ? "null" : "'" + text + "'") + "); valid: " + validNames());
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
