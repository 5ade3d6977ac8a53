package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.WorkerGrid;
import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.kernels.KernelSpec;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * Runs an element-wise kernel on every core of the JVM: a {@code @Parallel} loop's iterations, or
 * a {@code KernelContext} grid's threads, in chunks of {@link #CHUNK} or more that the cores take in turn
 * (through the forms of {@link SpreadForms}). The calling thread works alone for the first
 * {@link #ALONE_NANOS}, so that a short launch wakes no other thread, unless the last launch's
 * helpers still spin for the next ({@link CoreTeam#likelyAwake}); the helpers of
 * {@link CoreTeam} join for the rest (at once for tasks long enough to outlast waking them: {@link #each(int, long, IntConsumer)}). The
 * launch returns once every chunk begun has ended, without waiting for a helper that wakes too
 * late to find one (waking one can cost more than a short launch). The first
 * failure is rethrown then; chunks not yet begun are not begun, and what the others wrote stays
 * written. Arrays of a confined arena, which other threads may not touch, keep a launch on the
 * caller's thread; callers check {@link #mayShare} first.
 *
 * <p>Thread-safety: any thread; launches on disjoint outputs may run at once.
 */
public final class CoreSpread {
    /** Iterations or threads per chunk: enough that taking one costs little beside it. */
    static final int CHUNK = 4096;
    /** The fewest bytes of its arrays a loop's chunk covers ({@link #loopChunk}). */
    static final int CHUNK_BYTES = 64 * 1024;
    /**
     * How long the calling thread works alone before it wakes the helpers: about what waking them
     * costs, so that a launch this short is not made slower by the cores that would share it.
     */
    private static final long ALONE_NANOS = 20_000;
    /** Bytes a task moves from which it outlasts waking the other cores: they are woken at once. */
    static final long LONG_TASK_BYTES = 256 * 1024;
    /** Whether launches may share the cores ({@code -Dgradsync.jvmSpread=false}: never). */
    private static final boolean ENABLED = !"false".equals(System.getProperty("gradsync.jvmSpread"));
    /** Bound where the caller shares the work among the cores itself: launches then stay on its thread. */
    private static final ScopedValue<Boolean> ON_CALLERS_THREAD = ScopedValue.newInstance();
    /** A thread that owns no memory: what it may access, every thread may. Never started. */
    private static final Thread ANY_THREAD = Thread.ofPlatform().unstarted(() -> { });
    private static final Map<Method, Optional<MethodHandle>> CHUNKS = new ConcurrentHashMap<>();
    private static final Map<Method, Optional<MethodHandle>> ROWS = new ConcurrentHashMap<>();

    private CoreSpread() {
    }

    /** A chunk of the work; false where the work ended inside it (nothing follows). */
    @FunctionalInterface
    private interface Chunk {
        boolean run(int index) throws Throwable;
    }

    /** Runs a {@code @Parallel}-loop kernel over every core; false (nothing run) where it has no chunk form. */
    static boolean loop(KernelSpec spec, Object[] args) {
        MethodHandle form = CHUNKS.computeIfAbsent(spec.method(), m -> Optional.ofNullable(
                compiledAs(spec, KernelStyle.PARALLEL_LOOP) ? spreading(SpreadForms.chunks(m), 2) : null)).orElse(null);
        if (form == null || !shareable(args)) {
            return false;
        }
        int chunk = loopChunk(args);
        spread(Integer.MAX_VALUE / chunk + 1, ALONE_NANOS, c -> {
            int from = c * chunk;
            return (int) form.invokeExact(args, from, (int) Math.min((long) from + chunk, Integer.MAX_VALUE)) != 0;
        });
        return true;
    }

    /**
     * Iterations per chunk of a loop over {@code args}: {@link #CHUNK}, or more where its arrays'
     * elements of that many iterations come to less than {@link #CHUNK_BYTES}, so that on many cores
     * a loop over few narrow arrays does not spend its time claiming chunks.
     */
    static int loopChunk(Object[] args) {
        int bytes = 0;
        for (Object a : args) {
            if (a instanceof KernelArray k) {
                bytes += k.elementBytes();
            }
        }
        return bytes == 0 ? CHUNK : Math.max(CHUNK, Integer.highestOneBit(CHUNK_BYTES / bytes));
    }

    /**
     * Runs a {@code KernelContext} kernel without barriers or group-local arrays once per thread of
     * {@code shape}'s grid, over every core; false (nothing run) where it has no row form.
     * {@code args} are the kernel's arguments without its context, which was at {@code ctxIndex}.
     */
    static boolean grid(KernelSpec spec, LaunchShape shape, int ctxIndex, Object[] args) {
        MethodHandle form = ROWS.computeIfAbsent(spec.method(), m -> Optional.ofNullable(spreading(SpreadForms.rows(m), 4))).orElse(null);
        if (form == null || !shareable(args)) {
            return false;
        }
        WorkerGrid grid = shape.workerGrid();
        long total = grid.threads();
        int gx = shape.globalX();
        int gy = shape.globalY();
        spread((int) Math.min(Integer.MAX_VALUE, (total + CHUNK - 1) / CHUNK), ALONE_NANOS, c -> {
            Object[] own = new Object[args.length + 1]; // the arguments, with a context of this chunk's own
            System.arraycopy(args, 0, own, 0, ctxIndex);
            own[ctxIndex] = new KernelContext(grid);
            System.arraycopy(args, ctxIndex, own, ctxIndex + 1, args.length - ctxIndex);
            long to = Math.min(total, (long) c * CHUNK + CHUNK);
            for (long t = (long) c * CHUNK; t < to; ) {
                long row = t / gx;
                int x = (int) (t - row * gx);
                int end = (int) Math.min(gx, x + (to - t));
                form.invokeExact(own, x, end, (int) (row % gy), (int) (row / gy));
                t += end - x;
            }
            return true;
        });
        return true;
    }

    /**
     * Runs {@code work} with the forms and loops it launches on the calling thread, not spread over
     * the cores ({@link #mayShare} is false inside): for callers that share their work among the
     * cores themselves, whose threads would otherwise each wake every helper.
     */
    public static void onCallersThread(Runnable work) {
        ScopedValue.where(ON_CALLERS_THREAD, Boolean.TRUE).run(work);
    }

    /**
     * Whether a launch may share the cores: spreading is on ({@code -Dgradsync.jvmSpread}) and the
     * caller does not share its own work among them ({@link #onCallersThread}).
     */
    public static boolean mayShare() {
        return ENABLED && !ON_CALLERS_THREAD.isBound();
    }

    /**
     * Whether every array among {@code args} may be read and written from any thread: not memory of
     * a confined arena, which only its owner may touch (such a launch runs on the caller's thread).
     */
    public static boolean shareable(Object[] args) {
        for (Object a : args) {
            if (a instanceof KernelArray k && !k.segment().isAccessibleBy(ANY_THREAD)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Runs {@code task} for each of {@code 0 .. count - 1} on every core, as a loop's chunks are
     * run: for a built-in's JVM form, one slice of its arrays a task. Returns once every task has
     * ended; the first failure is rethrown then, and tasks not yet begun are not begun.
     */
    public static void each(int count, IntConsumer task) {
        runEach(count, ALONE_NANOS, task);
    }

    /**
     * As {@link #each(int, IntConsumer)} for tasks that each move {@code taskBytes} of memory: from
     * {@link #LONG_TASK_BYTES} on, every core is woken at once, since a first task run alone would
     * leave the others idle for its whole length (a reduction over large arrays, a few long
     * slices a core).
     */
    public static void each(int count, long taskBytes, IntConsumer task) {
        runEach(count, taskBytes >= LONG_TASK_BYTES ? 0 : ALONE_NANOS, task);
    }

    private static void runEach(int count, long aloneNanos, IntConsumer task) {
        if (count > 0) {
            spread(count, aloneNanos, c -> {
                task.accept(c);
                return true;
            });
        }
    }

    /**
     * {@code form} taking the kernel's arguments as one array before its {@code ints} int
     * parameters: one handle per kernel, so that the JIT compiles its call once, where a handle
     * bound to each launch's arguments would be compiled anew in every launch.
     */
    private static MethodHandle spreading(MethodHandle form, int ints) {
        if (form == null) {
            return null;
        }
        MethodType type = form.type();
        int params = type.parameterCount() - ints;
        MethodType generic = type;
        for (int i = 0; i < params; i++) {
            generic = generic.changeParameterType(i, Object.class);
        }
        return form.asType(generic).asSpreader(0, Object[].class, params);
    }

    private static boolean compiledAs(KernelSpec spec, KernelStyle style) {
        try {
            return spec.compile().style() == style;
        } catch (KernelCompileException e) {
            return false; // a Java-only kernel: its loop's shape is unchecked, so it runs as written
        }
    }

    /**
     * Runs chunks {@code 0 .. count - 1} until one says the work ended: here alone for the first
     * {@code aloneNanos} (none if 0), then on every core.
     */
    private static void spread(int count, long aloneNanos, Chunk chunk) {
        int first = 0;
        if (count > 1 && CoreTeam.likelyAwake()) {
            aloneNanos = 0; // no one to wake: the last launch's helpers still spin for this one
        }
        long start = System.nanoTime();
        try {
            while (aloneNanos > 0 && System.nanoTime() - start < aloneNanos) {
                if (!chunk.run(first++) || first == count) {
                    return;
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        Shared shared = new Shared(chunk, first, count);
        CoreTeam.Post post = CoreTeam.offer(shared, Math.min(Runtime.getRuntime().availableProcessors() - 1, count - first));
        shared.run();
        // the chunks other threads took: not the helpers themselves, which may wake after the
        // work is done (waking one costs more than a short launch) and then find nothing to do
        for (int spins = 0; shared.running() != 0; spins++) {
            if (spins < 10_000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        CoreTeam.withdraw(post);
        CoreTeam.ended();
        Throwable t = shared.failure.get();
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t != null) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * A launch's chunks past those its caller ran alone, claimed one at a time by the caller and
     * the helpers that join it through {@link CoreTeam}: each {@link #run}s it.
     */
    private static final class Shared implements Runnable {
        /** Where the claims' counter and the count of threads in the launch sit: a cache line apart. */
        private static final int NEXT = 0;
        private static final int RUNNING = 16;
        private final Chunk chunk;
        private final int count;
        // threads in the launch: a thread counts itself in once, before it first looks at over and
        // claims a chunk, and out when it finds none left, so that the caller, which reads it after
        // its own last claim or after setting over, misses no chunk begun (a count per chunk, beside
        // the claims' counter, made every claim wait for that line twice more: RESULTS, session 43)
        private final AtomicIntegerArray counters = new AtomicIntegerArray(RUNNING + 1);
        private final AtomicBoolean over = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Shared(Chunk chunk, int first, int count) {
            this.chunk = chunk;
            this.count = count;
            counters.set(NEXT, first);
        }

        /** Threads still in the launch. */
        int running() {
            return counters.get(RUNNING);
        }

        @Override
        public void run() {
            counters.incrementAndGet(RUNNING);
            try {
                while (runOne()) {
                    // each chunk claimed in runOne
                }
            } finally {
                counters.decrementAndGet(RUNNING);
            }
        }

        /** Claims and runs one chunk; false once none is left or the work ended (a failure is kept for the caller). */
        private boolean runOne() {
            try {
                if (over.get()) {
                    return false;
                }
                int c = counters.getAndIncrement(NEXT);
                if (c >= count || c < 0) {
                    return false;
                }
                if (!chunk.run(c)) {
                    over.set(true);
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
                over.set(true);
            }
            return true;
        }
    }
}
