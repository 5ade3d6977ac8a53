package io.gradsync.nccl;

/** Element types gradsync reduces, with NCCL's {@code ncclDataType_t} values. */
public enum NcclDataType {
    /** IEEE half precision, {@code ncclFloat16}. */
    FLOAT16(6, 2),
    /** IEEE single precision, {@code ncclFloat32}. */
    FLOAT32(7, 4),
    /** bfloat16, {@code ncclBfloat16} (NCCL built with CUDA 11 or later). */
    BFLOAT16(9, 2);

    private final int ncclValue;
    private final int byteSize;

    NcclDataType(int ncclValue, int byteSize) {
        this.ncclValue = ncclValue;
        this.byteSize = byteSize;
    }

    /** The {@code ncclDataType_t} value passed to NCCL. */
    public int ncclValue() {
        return ncclValue;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }
}
