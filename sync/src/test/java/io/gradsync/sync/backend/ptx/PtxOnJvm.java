package io.gradsync.sync.backend.ptx;

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
        return new PtxSynchronizer(devices, options, all, PtxScheduleTest.jvmKernels(),
                recorded ? PtxScheduleTest.enqueueAgain() : null, waitForCaller);
    }
}
