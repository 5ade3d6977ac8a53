package io.gradsync.sync.backend.opencl;

import static io.gradsync.sync.backend.Resources.closeQuietly;

import io.gradsync.sync.backend.SlicePlan;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClQueue;
import java.util.List;

/**
 * What one layout's calls reuse: per device and step, the prepared reduce and the three events
 * that order the step (its downloads, its kernel, its result download). Filled in place, so that
 * whatever was made before a failure is closed with it.
 */
final class OpenClPrepared {
    /** Per device, per step: the prepared reduce (null where the device's part is empty). */
    final OpenClKernels.PreparedLaunch[][] launches;
    DeviceEvent[][] downloaded;
    DeviceEvent[][] computed;
    DeviceEvent[][] reduced;

    OpenClPrepared(int devices, int steps) {
        launches = new OpenClKernels.PreparedLaunch[devices][steps];
    }

    void makeEvents(List<OpenClDevice> devices, int steps) {
        downloaded = events(devices, steps);
        computed = events(devices, steps);
        reduced = events(devices, steps);
    }

    /** Device i's reduce of step s: {@code average<N>} over its own slice and the others' parts in its scratch. */
    void prepareLaunches(OpenClQueue[] up, OpenClPlan plan, OpenClMemory memory) {
        int n = launches.length;
        float replicaCount = n; // the kernels divide their float64 sums by it
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < plan.steps.size(); s++) {
                OpenClPlan.Step step = plan.steps.get(s);
                int count = Math.toIntExact(step.count()[i]);
                if (count == 0) {
                    continue;
                }
                Object[] args = new Object[n + 2];
                DeviceSlice own = new DeviceSlice(step.run().buffers()[i], step.deviceOffset(i, i), count);
                args[0] = own;
                long slot = plan.scratchAt[i][s];
                for (int j = 0; j < n; j++) {
                    if (j == i) {
                        args[1 + j] = own;
                    } else {
                        args[1 + j] = new DeviceSlice(memory.scratch[i], slot, count);
                        slot += SlicePlan.align(step.bytes(i));
                    }
                }
                args[n + 1] = replicaCount;
                launches[i][s] = OpenClKernels.prepare(up[i], SlicePlan.averageKernel(step.run().dtype(), n), count, args);
            }
        }
    }

    private static DeviceEvent[][] events(List<OpenClDevice> devices, int count) {
        DeviceEvent[][] e = new DeviceEvent[devices.size()][count];
        for (int i = 0; i < e.length; i++) {
            for (int s = 0; s < count; s++) {
                e[i][s] = devices.get(i).createUntimedEvent();
            }
        }
        return e;
    }

    /** Closes the launches, then the events. */
    void close() {
        for (OpenClKernels.PreparedLaunch[] row : launches) {
            for (OpenClKernels.PreparedLaunch l : row) {
                if (l != null) {
                    l.close();
                }
            }
        }
        for (DeviceEvent[][] all : new DeviceEvent[][][] {downloaded, computed, reduced}) {
            if (all != null) {
                for (DeviceEvent[] row : all) {
                    for (DeviceEvent e : row) {
                        closeQuietly(e);
                    }
                }
            }
        }
    }
}
