package io.gradsync.sync.backend;

import io.gradsync.sync.DType;

/**
 * A synchronizer that sends fp32 gradients on a 16-bit wire itself, the conversions fused into its
 * own schedule (ptx: each replica rounds straight into its peers' memory, and widens the average as
 * it pulls it), with the same bits as the wire around any backend ({@code WireSynchronizer});
 * {@code Synchronizers} puts no wire around it where {@link #wire()} is the one asked for.
 */
public interface FusedWire {
    /** The type fp32 gradients cross as in this synchronizer's own schedule; {@code FP32}: it sends them as they are. */
    DType wire();
}
