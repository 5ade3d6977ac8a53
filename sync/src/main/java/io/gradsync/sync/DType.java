package io.gradsync.sync;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Element types of gradients. Half types are stored in 16 bits and accumulated in fp32.
 *
 * <p>Immutable: safe to share between threads.
 */
public enum DType {
    FP32(4, "float"),
    BF16(2, "bfloat16"),
    FP16(2, "half");

    private final int bytes;
    private final String ncclName;

    DType(int bytes, String ncclName) {
        this.bytes = bytes;
        this.ncclName = ncclName;
    }

    public int bytes() {
        return bytes;
    }

    /** The name nccl-tests prints in its type column. */
    public String tableName() {
        return ncclName;
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code fp32}, {@code float32}, {@code float}, {@code bf16}, {@code bfloat16}, {@code fp16}, {@code half}. */
    public static DType parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("dtype is missing; valid: " + valid());
        }
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "fp32", "f32", "float32", "float" -> FP32;
            case "bf16", "bfloat16" -> BF16;
            case "fp16", "f16", "float16", "half" -> FP16;
            default -> throw new IllegalArgumentException("unknown dtype '" + text + "'; valid: " + valid());
        };
    }

    private static String valid() {
        return Arrays.stream(values()).map(DType::label).collect(Collectors.joining(", "));
    }
}
