package io.gradsync.sync;

import java.util.List;

/**
 * A synchronizer that can sum the squares of the averaged values in the pass that averages them,
 * instead of reading every gradient again afterwards: the global norm of gradient clipping, and
 * the finite check (the sum is finite exactly when every averaged value is).
 *
 * <p>Thread-safety: as {@link io.gradsync.sync.GradientSynchronizer}: calls are serialized.
 */
public interface FusedSumOfSquares {

    /**
     * Averages like {@link GradientSynchronizer#synchronize} and returns, per gradient of the
     * replicas (in their order), the sum in float64 of the squares of its averaged values (as
     * stored: 16-bit values after rounding). Deterministic: the same inputs give the same bits.
     *
     * @throws UnsupportedOperationException with a single replica, where nothing is averaged
     */
    double[] synchronizeSumOfSquares(List<Replica> replicas);
}
