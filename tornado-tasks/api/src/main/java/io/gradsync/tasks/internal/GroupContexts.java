package io.gradsync.tasks.internal;

import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.WorkerGrid;

/**
 * Makes a {@link KernelContext} that belongs to a {@link WorkGroup}: what the JVM runtime gives
 * each thread of a kernel that uses barriers, warp reductions or group-local arrays. Users make
 * contexts without a group only, so this constructor is not public API.
 */
public final class GroupContexts {
    /** The constructor {@code KernelContext} installs. */
    @FunctionalInterface
    public interface Factory {
        KernelContext create(WorkerGrid grid, WorkGroup group);
    }

    private static final Installed<Factory> FACTORY = new Installed<>("group context", KernelContext.class);

    private GroupContexts() {
    }

    /** Called once, by {@code KernelContext}. */
    public static void install(Factory factory) {
        FACTORY.install(factory);
    }

    /** A context over {@code grid} for one thread of {@code group}. */
    public static KernelContext inGroup(WorkerGrid grid, WorkGroup group) {
        return FACTORY.get().create(grid, group);
    }
}
