package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.internal.GroupContexts;
import io.gradsync.tasks.internal.WorkGroup;
import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.api.WorkerGrid;
import io.gradsync.tasks.kernels.JvmFastForm;
import io.gradsync.tasks.kernels.KernelSpec;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ExecutionException;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs kernels as the plain Java they are. A {@code @Parallel}-loop kernel runs in chunks on every
 * core, and a KernelContext kernel without barriers or group-local arrays once per thread of its
 * grid, in rows on every core ({@link CoreSpread}); a kernel that cannot be cut so (a serial one,
 * one that reads private members of other classes) is called once, or once per thread of its grid
 * in a slice a core ({@code -Dgradsync.jvmSpread=false}: every kernel so). A KernelContext
 * kernel that uses barriers or group-local arrays (or that the compiler rejects, so that nobody can tell) runs
 * group by group instead, each group's threads at once on virtual threads, so that they can wait
 * for each other and share their arrays. The fused averages, the element-wise 16-bit kernels and
 * the reductions run as their JVM fast forms ({@link KernelSpec#jvmFastForm()}): the kernels'
 * results, the way a CPU computes them well.
 *
 * <p>In an unexported package: public only for the plans of this module and, by a qualified
 * export, the modules that time or test kernels on the JVM as plans do.
 */
public final class JvmKernels {
    private static final Map<Method, Boolean> BY_GROUPS = new ConcurrentHashMap<>();

    private JvmKernels() {
    }

    /**
     * Runs {@code spec} with {@code args}, one per Java parameter (KernelContext excluded),
     * as a 1-D launch of {@code globalSize} threads in groups of {@code localSize}.
     */
    public static void run(KernelSpec spec, long globalSize, int localSize, Object... args) {
        int global = Math.toIntExact(globalSize);
        int groups = (int) ((global + (long) localSize - 1) / localSize);
        run(spec, new LaunchShape(groups, localSize, 1, 1, 1, 1, global, 1, 1), args);
    }

    /** Runs {@code spec} with {@code args} over {@code shape}'s grid (its own threads, not the padding). */
    public static void run(KernelSpec spec, LaunchShape shape, Object... args) {
        execute(spec, shape, true, args);
    }

    /**
     * As {@link #run}, but always the kernel's own Java method as Java runs it, never the JVM form
     * of a built-in kernel nor a loop split over cores: the reference that those forms and the
     * device forms are checked against.
     */
    public static void runAsWritten(KernelSpec spec, LaunchShape shape, Object... args) {
        execute(spec, shape, false, args);
    }

    /** {@link #run} ({@code fastForm}: a built-in's JVM form where it has one) or {@link #runAsWritten}. */
    private static void execute(KernelSpec spec, LaunchShape shape, boolean fastForm, Object[] args) {
        Method m = spec.method();
        io.gradsync.tasks.internal.UserCode.open(m); // a public kernel in a class that is not public: Java calls it fine, reflection needs this
        int ctxIndex = -1;
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (types[i] == KernelContext.class) {
                ctxIndex = i;
            }
        }
        if (args.length != types.length - (ctxIndex >= 0 ? 1 : 0)) {
            throw new IllegalArgumentException(spec.name() + " takes " + (types.length - (ctxIndex >= 0 ? 1 : 0)) + " arguments, got " + args.length);
        }
        JvmFastForm fast = fastForm ? spec.jvmFastForm().orElse(null) : null;
        if (fast != null && fast.run(args)) {
            return;
        }
        if (spec.style() != KernelStyle.CONTEXT) {
            // loops and grids in chunks on every core where they may share them, else as written
            if (!fastForm || !CoreSpread.mayShare() || spec.style() != KernelStyle.PARALLEL_LOOP || !CoreSpread.loop(spec, args)) {
                invoke(m, args);
            }
            return;
        }
        if (runsByGroups(spec)) {
            runByGroups(spec, shape, ctxIndex, args);
            return;
        }
        if (fastForm && CoreSpread.mayShare() && CoreSpread.grid(spec, shape, ctxIndex, args)) {
            return;
        }
        WorkerGrid grid = shape.workerGrid();
        long total = grid.threads();
        int gx = shape.globalX();
        int gy = shape.globalY();
        int workers = (int) Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), total / 1024 + 1));
        int at = ctxIndex;
        CoreSpread.each(workers, CoreSpread.LONG_TASK_BYTES, w -> { // one long task a core: every core at once
            KernelContext ctx = new KernelContext(grid);
            Object[] full = withContext(types.length, at, ctx, args);
            long from = total * w / workers;
            long to = total * (w + 1) / workers;
            for (long t = from; t < to; t++) {
                ctx.moveTo((int) (t % gx), (int) (t / gx % gy), (int) (t / gx / gy));
                invoke(m, full);
            }
        });
    }

    private static boolean runsByGroups(KernelSpec spec) {
        return BY_GROUPS.computeIfAbsent(spec.method(), m -> {
            try {
                return spec.compile().usesGroups();
            } catch (KernelCompileException e) {
                return true; // Java-only kernel: it may use anything
            }
        });
    }

    private static void runByGroups(KernelSpec spec, LaunchShape shape, int ctxIndex, Object[] args) {
        Method m = spec.method();
        int types = m.getParameterCount();
        WorkerGrid grid = shape.workerGrid();
        int[] groups = {shape.grid(), shape.gridY(), shape.gridZ()};
        int[] local = {shape.block(), shape.blockY(), shape.blockZ()};
        int[] global = {shape.globalX(), shape.globalY(), shape.globalZ()};
        if (shape.isPadded() && barrier(spec)) {
            throw new IllegalArgumentException(spec.name() + " waits at a barrier, so its grid must be whole work groups: "
                    + grid + " is not (choose a local size that divides the grid)");
        }
        long groupCount = (long) groups[0] * groups[1] * groups[2];
        int parallel = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), (int) Math.min(groupCount, Integer.MAX_VALUE)));
        CoreSpread.each(parallel, CoreSpread.LONG_TASK_BYTES, w -> {
            try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (long g = w; g < groupCount; g += parallel) {
                    int[] base = {
                            (int) (g % groups[0]) * local[0],
                            (int) (g / groups[0] % groups[1]) * local[1],
                            (int) (g / groups[0] / groups[1]) * local[2]};
                    List<int[]> members = new ArrayList<>();
                    for (int z = 0; z < local[2]; z++) {
                        for (int y = 0; y < local[1]; y++) {
                            for (int x = 0; x < local[0]; x++) {
                                int[] id = {base[0] + x, base[1] + y, base[2] + z};
                                if (id[0] < global[0] && id[1] < global[1] && id[2] < global[2]) {
                                    members.add(id);
                                }
                            }
                        }
                    }
                    WorkGroup group = new WorkGroup(members.size());
                    List<Future<?>> running = new ArrayList<>();
                    for (int[] id : members) {
                        running.add(threads.submit(() -> {
                            KernelContext ctx = GroupContexts.inGroup(grid, group).moveTo(id[0], id[1], id[2]);
                            try {
                                invoke(m, withContext(types, ctxIndex, ctx, args));
                            } catch (RuntimeException | Error e) {
                                group.abandon();
                                throw e;
                            }
                            group.leave("the thread of global index " + java.util.Arrays.toString(id));
                        }));
                    }
                    joinFirstFailure(running);
                }
            }
        });
    }

    private static boolean barrier(KernelSpec spec) {
        try {
            return spec.compile().usesBarrier();
        } catch (KernelCompileException e) {
            return true;
        }
    }

    /** Waits for every thread of a group and rethrows the first failure (not the broken barriers it caused). */
    private static void joinFirstFailure(List<Future<?>> running) {
        RuntimeException first = null;
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while a kernel ran", e);
            } catch (ExecutionException e) {
                RuntimeException r = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
                boolean consequence = r instanceof IllegalStateException && r.getCause() instanceof java.util.concurrent.BrokenBarrierException;
                if (first == null || (isConsequence(first) && !consequence)) {
                    first = r;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static boolean isConsequence(RuntimeException r) {
        return r instanceof IllegalStateException && r.getCause() instanceof java.util.concurrent.BrokenBarrierException;
    }

    private static Object[] withContext(int count, int at, KernelContext ctx, Object[] args) {
        Object[] full = new Object[count];
        for (int i = 0, j = 0; i < count; i++) {
            full[i] = i == at ? ctx : args[j++];
        }
        return full;
    }

    private static void invoke(Method m, Object[] args) {
        try {
            m.invoke(null, args);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
