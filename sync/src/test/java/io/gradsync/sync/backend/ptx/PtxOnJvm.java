package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.PtxOptions;
import io.gradsync.tasks.device.Device;
import java.util.Arrays;
import java.util.List;

/**
 * The ptx backend's schedule on JVM devices (its kernels run as Java), for tests of other packages
 * that compare it with the other backends; the synchronizer's own constructor stays package-private.
 */
public final class PtxOnJvm {
    private PtxOnJvm() {
    }

    /**
     * @param recorded record the schedule as a graph and replay it by enqueueing again, as the
     *                 CUDA graph path does
     */
    public static GradientSynchronizer schedule(List<? extends Device> devices, PtxOptions options, boolean recorded,
            boolean waitForCaller) {
        boolean[][] all = new boolean[devices.size()][devices.size()];
        for (boolean[] row : all) {
            Arrays.fill(row, true);
        }
        return schedule(devices, options, all, recorded, waitForCaller);
    }

    /** As {@link #schedule(List, PtxOptions, boolean, boolean)} with pairs that have no P2P ({@code p2p[i][j]} false) moving through host memory. */
    public static GradientSynchronizer schedule(List<? extends Device> devices, PtxOptions options, boolean[][] p2p, boolean recorded,
            boolean waitForCaller) {
        return schedule(devices, options, p2p, recorded, waitForCaller, DType.FP32);
    }

    /** As above, fp32 averages sent on the 16-bit {@code wire} inside the schedule where every pair has P2P. */
    public static GradientSynchronizer schedule(List<? extends Device> devices, PtxOptions options, boolean[][] p2p, boolean recorded,
            boolean waitForCaller, DType wire) {
        return new PtxSynchronizer(devices, options, p2p, PtxScheduleTest.jvmKernels(),
                recorded ? PtxScheduleTest.enqueueAgain() : null, waitForCaller, wire);
    }
}
