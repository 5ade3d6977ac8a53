package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.LaunchShape;

/** Test helper: the launch a built-in gets for {@code workItems}, capped to keep JVM runs of the kernel itself short. */
final class LaunchShapes {
    private LaunchShapes() {
    }

    static LaunchShape forSpec(KernelSpec spec, int workItems) {
        LaunchShape s = spec.launchShape(workItems);
        return s.grid() > 64 ? new LaunchShape(64, s.block()) : s;
    }
}
