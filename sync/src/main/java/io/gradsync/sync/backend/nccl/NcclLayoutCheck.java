package io.gradsync.sync.backend.nccl;

import io.gradsync.sync.NcclOptions;
import io.gradsync.sync.SyncOptions;
import io.gradsync.nccl.NcclDataType;
import io.gradsync.nccl.NcclRedOp;
import io.gradsync.tasks.cuda.CudaStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The nccl backend's cross-rank layout agreement: before a multi-process all-reduce the ranks
 * compare their element totals, gradient layouts and calls ({@link NcclPlan}'s hashes) with one
 * tiny max all-reduce of the values and their negations on device 0's scratch, so that a mismatch
 * fails with a message naming this rank's layout instead of a hang or garbage, and ranks whose
 * gradients are contiguous on some ranks only all fall back to one call per gradient. With
 * {@link SyncOptions.LayoutCheck#ON_CHANGE} the last agreed plan is remembered and not checked again.
 *
 * <p>Thread-safety: none; used only under the {@link NcclSynchronizer}'s lock (its calls are serialized).
 */
final class NcclLayoutCheck {
    /** Layout check: 12 values cut into 16-bit pieces (exact in fp32), then their negations, reduced with max. */
    private static final int CHECK_VALUES = 12;
    private static final int CHECK_FLOATS = 2 * CHECK_VALUES;
    /** The scratch each device holds for the check (and the barrier). */
    static final long SCRATCH_BYTES = CHECK_FLOATS * Float.BYTES;

    private final NcclComms nccl;
    private final NcclWatch watch;
    private final NcclOptions options;
    private NcclPlan agreed;
    private boolean agreedMerged;

    NcclLayoutCheck(NcclComms nccl, NcclWatch watch, NcclOptions options) {
        this.nccl = nccl;
        this.watch = watch;
        this.options = options;
    }

    /**
     * Ranks compare element total, gradient layout and the calls they would make; all ranks get
     * the same reduced vector, so all decide alike. Returns whether the merged calls may be used.
     */
    boolean agreeOnLayout(NcclPlan p, long start, long deadline) {
        if (options.layoutCheck() == SyncOptions.LayoutCheck.ON_CHANGE && agreed != null
                && agreed.layoutHash == p.layoutHash && agreed.callHash == p.callHash && agreed.total == p.total) {
            return agreedMerged;
        }
        MemorySegment host = nccl.scratchHost.segment();
        put(host, 0, p.total);
        put(host, 1, p.layoutHash);
        put(host, 2, p.callHash);
        CudaStream s = nccl.streams[0];
        s.copyFromHost(nccl.scratchHost, 0, nccl.scratch[0], 0, SCRATCH_BYTES);
        watch.arm(deadline);
        RuntimeException failure = null;
        try {
            nccl.comms.getFirst().allReduceInPlace(nccl.scratch[0].address(), CHECK_FLOATS, NcclDataType.FLOAT32,
                    NcclRedOp.MAX, nccl.streamAddresses[0]);
        } catch (RuntimeException e) {
            failure = e;
        }
        watch.afterLaunch(failure, "the layout check", start);
        s.copyToHost(nccl.scratch[0], 0, nccl.scratchHost, 0, SCRATCH_BYTES);
        watch.await(p.checkDescription, start, deadline);
        boolean sameTotal = agree(host, 0);
        boolean sameLayout = agree(host, 1);
        boolean sameCalls = agree(host, 2);
        if (!sameTotal || !sameLayout) {
            String what = !sameTotal ? "the total element count differs" : "gradient names, sizes, dtypes or order differ";
            throw new IllegalArgumentException("nccl: gradient layouts differ between the " + nccl.worldSize + " ranks ("
                    + what + "), nothing was averaged; rank " + nccl.rank + " (" + nccl.devices.getFirst().id() + ") has "
                    + p.layout());
        }
        agreed = p;
        agreedMerged = sameCalls; // gradients contiguous on some ranks only: every rank sends them one by one
        return agreedMerged;
    }

    /** Whether all ranks sent the same value {@code v}: its reduced max equals its reduced min, piece by piece. */
    private static boolean agree(MemorySegment reduced, int v) {
        for (int piece = 0; piece < 4; piece++) {
            float max = reduced.getAtIndex(ValueLayout.JAVA_FLOAT, 4L * v + piece);
            float min = -reduced.getAtIndex(ValueLayout.JAVA_FLOAT, CHECK_VALUES + 4L * v + piece);
            if (max != min) {
                return false;
            }
        }
        return true;
    }

    /** Value {@code v} as four 16-bit pieces (exact in fp32), and their negations in the second half. */
    private static void put(MemorySegment host, int v, long value) {
        for (int piece = 0; piece < 4; piece++) {
            float f = (float) ((value >>> (16 * piece)) & 0xFFFF);
            host.setAtIndex(ValueLayout.JAVA_FLOAT, 4L * v + piece, f);
            host.setAtIndex(ValueLayout.JAVA_FLOAT, CHECK_VALUES + 4L * v + piece, -f);
        }
    }
}
