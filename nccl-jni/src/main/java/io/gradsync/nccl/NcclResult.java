package io.gradsync.nccl;

/** NCCL's {@code ncclResult_t}. */
public enum NcclResult {
    SUCCESS(0),
    UNHANDLED_CUDA_ERROR(1),
    SYSTEM_ERROR(2),
    INTERNAL_ERROR(3),
    INVALID_ARGUMENT(4),
    INVALID_USAGE(5),
    REMOTE_ERROR(6),
    IN_PROGRESS(7),
    TIMEOUT(8),
    /** A code this binding does not know (a newer NCCL). */
    UNKNOWN(Integer.MIN_VALUE);

    private static final NcclResult[] BY_CODE = {
        SUCCESS, UNHANDLED_CUDA_ERROR, SYSTEM_ERROR, INTERNAL_ERROR, INVALID_ARGUMENT,
        INVALID_USAGE, REMOTE_ERROR, IN_PROGRESS, TIMEOUT
    };

    private final int code;

    NcclResult(int code) {
        this.code = code;
    }

    /** The {@code ncclResult_t} value; {@link Integer#MIN_VALUE} for {@link #UNKNOWN}. */
    public int code() {
        return code;
    }

    /** The result for a code, {@link #UNKNOWN} where the code is not one of NCCL's. */
    public static NcclResult fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
