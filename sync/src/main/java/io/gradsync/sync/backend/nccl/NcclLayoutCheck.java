package io.gradsync.sync.backend.nccl;

import io.gradsync.sync.NcclOptions;
import io.gradsync.sync.SyncOptions;
import io.gradsync.nccl.NcclDataType;
import io.gradsync.nccl.NcclRedOp;
import io.gradsync.sync.backend.Collective;
import io.gradsync.tasks.cuda.CudaStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The nccl backend's cross-rank agreement before a multi-process collective: the ranks compare
 * which collective they call (and a broadcast's root), their element totals, gradient layouts and
 * calls ({@link NcclPlan}'s hashes) with one tiny max all-reduce of the values and their negations
 * on device 0's scratch, so that a mismatch fails with a message naming it instead of a hang or
 * garbage, and ranks whose gradients are contiguous on some ranks only all fall back to one call
 * per gradient. With {@link SyncOptions.LayoutCheck#ON_CHANGE} the calls last agreed on (up to
 * {@link #REMEMBERED}, so that a loop over a few layouts, as buckets' or a staged wire's, checks
 * each once) are remembered and not checked again.
 *
 * <p>Thread-safety: none; used only under the {@link NcclSynchronizer}'s lock (its calls are serialized).
 */
final class NcclLayoutCheck {
    /** Slots 0..11: total, layout hash and call hash cut into 16-bit pieces (exact in fp32). */
    private static final int PIECES = 12;
    /** The collective's kind and its root + 1, each one float (exact below 2^24 ranks). */
    private static final int KIND = PIECES;
    private static final int ROOT = PIECES + 1;
    private static final int SLOTS = PIECES + 2;
    /** The slots, then their negations, reduced with max: max and -max(-x) are the max and min over the ranks. */
    private static final int CHECK_FLOATS = 2 * SLOTS;
    /** The scratch each device holds for the check (and the barrier). */
    static final long SCRATCH_BYTES = CHECK_FLOATS * Float.BYTES;

    private final NcclComms nccl;
    private final NcclWatch watch;
    private final NcclOptions options;
    /** How many agreed calls ON_CHANGE remembers. */
    static final int REMEMBERED = 64;
    /** ON_CHANGE: what the ranks agreed on, and whether they may merge, least recently used first. */
    private final Map<Agreed, Boolean> agreed = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Agreed, Boolean> eldest) {
            return size() > REMEMBERED;
        }
    };

    private record Agreed(Collective.Kind kind, long total, long layoutHash, long callHash, int root) {
        static Agreed of(NcclPlan p, Collective c) {
            return new Agreed(c.kind(), p.total, p.layoutHash, p.callHash, c.root());
        }
    }

    NcclLayoutCheck(NcclComms nccl, NcclWatch watch, NcclOptions options) {
        this.nccl = nccl;
        this.watch = watch;
        this.options = options;
    }

    /**
     * Ranks compare the collective, element total, gradient layout and the calls they would make;
     * all ranks get the same reduced vector, so all decide alike. Returns whether the merged calls
     * may be used.
     *
     * @param what the call the check comes before, for a timeout's message
     * @throws IllegalArgumentException on every rank where the ranks differ (nothing moved)
     */
    boolean agree(NcclPlan p, Collective c, String what, long start, long deadline) {
        Boolean known = agreed.get(Agreed.of(p, c));
        if (options.layoutCheck() == SyncOptions.LayoutCheck.ON_CHANGE && known != null) {
            return known;
        }
        MemorySegment host = nccl.scratchHost.segment();
        fill(host, p, c);
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
        watch.await(what, start, deadline);
        String mismatch = collectiveMismatch(host, nccl.worldSize);
        if (mismatch != null) {
            throw new IllegalArgumentException(mismatch + ", so nothing moved; rank " + nccl.rank + " ("
                    + nccl.devices.getFirst().id() + ") called the " + c.label());
        }
        boolean sameTotal = same(host, 0);
        boolean sameLayout = same(host, 1);
        boolean sameCalls = same(host, 2);
        if (!sameTotal || !sameLayout) {
            String differs = !sameTotal ? "the total element count differs" : "gradient names, sizes, dtypes or order differ";
            throw new IllegalArgumentException("nccl: gradient layouts differ between the " + nccl.worldSize + " ranks ("
                    + differs + "), so the " + c.label() + " did not run; rank " + nccl.rank + " ("
                    + nccl.devices.getFirst().id() + ") has " + p.layout());
        }
        // gradients contiguous on some ranks only: every rank sends them one by one
        agreed.put(Agreed.of(p, c), sameCalls);
        return sameCalls;
    }

    /**
     * What differs in the collectives the ranks called, from the reduced check vector: null where
     * they agree. The max and the min of the kind (and of the root) are each some rank's own, so
     * the message names two calls that were really made.
     */
    static String collectiveMismatch(MemorySegment reduced, int worldSize) {
        int maxKind = (int) max(reduced, KIND);
        int minKind = (int) min(reduced, KIND);
        Collective.Kind[] kinds = Collective.Kind.values();
        if (maxKind != minKind) {
            return "nccl: the " + worldSize + " ranks called different collectives (at least the "
                    + kinds[minKind].label() + " and the " + kinds[maxKind].label() + ")";
        }
        int maxRoot = (int) max(reduced, ROOT) - 1;
        int minRoot = (int) min(reduced, ROOT) - 1;
        if (maxRoot != minRoot) {
            return "nccl: the " + worldSize + " ranks called the " + kinds[maxKind].label()
                    + " with different roots (at least replicas " + minRoot + " and " + maxRoot + ")";
        }
        return null;
    }

    /** Whether all ranks sent the same value {@code v}: its reduced max equals its reduced min, piece by piece. */
    private static boolean same(MemorySegment reduced, int v) {
        for (int piece = 0; piece < 4; piece++) {
            if (max(reduced, 4 * v + piece) != min(reduced, 4 * v + piece)) {
                return false;
            }
        }
        return true;
    }

    private static float max(MemorySegment reduced, int slot) {
        return reduced.getAtIndex(ValueLayout.JAVA_FLOAT, slot);
    }

    private static float min(MemorySegment reduced, int slot) {
        return -reduced.getAtIndex(ValueLayout.JAVA_FLOAT, SLOTS + slot);
    }

    /** Value {@code v} as four 16-bit pieces (exact in fp32), and their negations in the second half. */
    private static void put(MemorySegment host, int v, long value) {
        for (int piece = 0; piece < 4; piece++) {
            putSlot(host, 4 * v + piece, (value >>> (16 * piece)) & 0xFFFF);
        }
    }

    /** One slot: the value, and its negation in the second half. */
    private static void putSlot(MemorySegment host, int slot, long value) {
        float f = (float) value;
        host.setAtIndex(ValueLayout.JAVA_FLOAT, slot, f);
        host.setAtIndex(ValueLayout.JAVA_FLOAT, SLOTS + slot, -f);
    }

    /** This rank's check vector for {@code c} on {@code p}, as it goes into the max all-reduce. */
    static void fill(MemorySegment host, NcclPlan p, Collective c) {
        put(host, 0, p.total);
        put(host, 1, p.layoutHash);
        put(host, 2, p.callHash);
        putSlot(host, KIND, c.kind().ordinal());
        putSlot(host, ROOT, c.root() + 1);
    }
}
