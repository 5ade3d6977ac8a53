package io.gradsync.sync.backend.opencl;

import io.gradsync.sync.backend.SlicePlan;
import java.util.ArrayList;
import java.util.List;

/**
 * A layout's pipeline: each run of gradients ({@link SlicePlan}) cut into N slices, each slice into
 * steps of at most {@code stepBytes}, and where each device's scratch holds the other replicas'
 * parts of every step. Computed once per layout; holds no device resources.
 */
final class OpenClPlan {
    /** One pipeline step: per slice i, elements {@code [first[i], first[i] + count[i])} of the run. */
    record Step(SlicePlan.Run run, long[] first, long[] count) {
        long bytes(int i) {
            return count[i] * run.dtype().bytes();
        }

        /** Byte offset of slice i's part of this step in replica r's buffer. */
        long deviceOffset(int r, int i) {
            return run.offsets()[r] + first[i] * run.dtype().bytes();
        }

        long hostOffset(int i) {
            return run.packed() + first[i] * run.dtype().bytes();
        }
    }

    final SlicePlan slices;
    final List<Step> steps;
    /** Per device, per step: where the other replicas' parts sit in the scratch buffer. */
    final long[][] scratchAt;
    /** Per device: the scratch bytes its steps need. */
    final long[] scratchBytes;

    private OpenClPlan(SlicePlan slices, List<Step> steps, long[][] scratchAt, long[] scratchBytes) {
        this.slices = slices;
        this.steps = steps;
        this.scratchAt = scratchAt;
        this.scratchBytes = scratchBytes;
    }

    static OpenClPlan of(SlicePlan p, int n, long stepBytes) {
        List<Step> cut = new ArrayList<>();
        for (SlicePlan.Run run : p.runs()) {
            long per = Math.max(SlicePlan.ALIGN_ELEMENTS, stepBytes / run.dtype().bytes());
            long longest = 0;
            for (int i = 0; i < n; i++) {
                longest = Math.max(longest, run.sliceCount(i));
            }
            for (long done = 0; done < longest; done += per) {
                long[] first = new long[n];
                long[] count = new long[n];
                for (int i = 0; i < n; i++) {
                    first[i] = run.sliceStart(i) + Math.min(done, run.sliceCount(i));
                    count[i] = Math.max(0, Math.min(per, run.sliceCount(i) - done));
                }
                cut.add(new Step(run, first, count));
            }
        }
        long[][] at = new long[n][cut.size()];
        long[] scratch = new long[n];
        for (int i = 0; i < n; i++) {
            long used = 0;
            for (int s = 0; s < cut.size(); s++) {
                at[i][s] = used;
                used += (n - 1) * SlicePlan.align(cut.get(s).bytes(i));
            }
            scratch[i] = Math.max(used, 256);
        }
        return new OpenClPlan(p, List.copyOf(cut), at, scratch);
    }
}
