package io.gradsync.nccl;

/** NCCL's built-in reduction operators ({@code ncclRedOp_t}). */
public enum NcclRedOp {
    SUM(0),
    PROD(1),
    MAX(2),
    MIN(3),
    /** Sum divided by the number of ranks, done by NCCL (NCCL 2.10 and later). */
    AVG(4);

    private final int ncclValue;

    NcclRedOp(int ncclValue) {
        this.ncclValue = ncclValue;
    }

    /** The {@code ncclRedOp_t} value passed to NCCL. */
    public int ncclValue() {
        return ncclValue;
    }
}
