package io.gradsync.nccl;

import java.util.Optional;

/**
 * A failed NCCL call, or a call that could not reach NCCL (library absent, symbol missing
 * from an older NCCL, CUDA driver failure while selecting the device). It names the call,
 * NCCL's result code and text, and NCCL's last-error detail where there is one.
 */
public final class NcclException extends RuntimeException {
    /** {@link #code()} of a failure that is not an NCCL result (no library, no symbol, CUDA driver). */
    public static final int NOT_AN_NCCL_RESULT = -1;

    private static final long serialVersionUID = 1L;

    private final String call;
    private final int code;
    private final String text;
    private final String lastError;

    /**
     * @param call      the NCCL (or CUDA driver, or loader) function that failed
     * @param code      NCCL's {@code ncclResult_t}, or {@link #NOT_AN_NCCL_RESULT}
     * @param text      NCCL's text for the code ({@code ncclGetErrorString}) or the failure's description
     * @param lastError {@code ncclGetLastError} at the time of failure; may be null or empty
     */
    public NcclException(String call, int code, String text, String lastError) {
        super(message(call, code, text, lastError));
        this.call = call;
        this.code = code;
        this.text = text == null ? "" : text;
        this.lastError = lastError == null ? "" : lastError;
    }

    private static String message(String call, int code, String text, String lastError) {
        StringBuilder sb = new StringBuilder(call).append(" failed: ");
        if (code != NOT_AN_NCCL_RESULT) {
            sb.append(NcclResult.fromCode(code)).append(" (").append(code).append(')');
            if (text != null && !text.isEmpty()) {
                sb.append(", ");
            }
        }
        if (text != null) {
            sb.append(text);
        }
        if (lastError != null && !lastError.isBlank()) {
            sb.append("; NCCL last error: ").append(lastError.strip());
        }
        return sb.toString();
    }

    /** The call that failed, e.g. {@code ncclAllReduce}. */
    public String call() {
        return call;
    }

    /** NCCL's result code, or {@link #NOT_AN_NCCL_RESULT}. */
    public int code() {
        return code;
    }

    /** NCCL's result, empty where the failure is not an NCCL result. */
    public Optional<NcclResult> result() {
        return code == NOT_AN_NCCL_RESULT ? Optional.empty() : Optional.of(NcclResult.fromCode(code));
    }

    /** NCCL's text for the code, or the description of a non-NCCL failure; never null. */
    public String text() {
        return text;
    }

    /** NCCL's {@code ncclGetLastError} text; empty where there was none. It may predate this call. */
    public String lastError() {
        return lastError;
    }
}
