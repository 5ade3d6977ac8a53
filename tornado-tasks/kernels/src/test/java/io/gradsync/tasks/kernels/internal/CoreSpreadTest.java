package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.api.WorkerGrid;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntConsumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Kernels spread over the JVM's cores ({@link CoreSpread}, {@link SpreadForms}) give what the
 * method run once gives, bit for bit, on fresh random data with poisoned outputs; a chunk form
 * runs exactly its chunk; kernels that cannot be spread still run, as written.
 */
class CoreSpreadTest {
    private static final int C = CoreSpread.CHUNK;

    /** Kernels of the loop shapes users write. */
    public static final class Shapes {
        private Shapes() {
        }

        public static void saxpy(FloatArray y, FloatArray x, float a) {
            for (@Parallel int i = 0; i < y.getSize(); i++) {
                y.set(i, a * x.get(i) + y.get(i));
            }
        }

        /** A start of its own, an inclusive bound, wide parameters and locals (the chunk form shifts their slots). */
        public static void offsetInclusive(FloatArray out, int first, int last, double scale, long salt) {
            double s = scale * 2;
            long k = salt ^ 5;
            for (@Parallel int i = first; i <= last; i++) {
                long m = k + i;
                double d = s * i;
                out.set(i, (float) (d + m));
            }
        }

        /** The bound first: not the test javac writes for {@code i < n}, so the chunk's limit is a test of its own. */
        public static void boundFirst(IntArray out, int n) {
            for (@Parallel int i = 0; n > i; i++) {
                out.set(i, i * 3 + 1);
            }
        }

        public static void skipping(IntArray out) {
            for (@Parallel int i = 0; i < out.getSize(); i++) {
                if (i % 3 == 0) {
                    continue;
                }
                out.set(i, -i);
            }
        }

        /** Code before the loop (with a return) and after it. */
        public static void aroundTheLoop(IntArray out, int n) {
            int half = n / 2;
            if (n <= 0) {
                return;
            }
            for (@Parallel int i = 0; i < half; i++) {
                out.set(i, half - i);
            }
            int unused = half * 2;
        }

        public static void readsPastTheEnd(FloatArray out, FloatArray x) {
            for (@Parallel int i = 0; i < out.getSize(); i++) {
                out.set(i, x.get(i + 1));
            }
        }

        private static float tripled(float v) {
            return v * 3;
        }

        /** Calls a private method, which its chunk form copies. */
        public static void callsPrivate(FloatArray out, FloatArray x) {
            for (@Parallel int i = 0; i < out.getSize(); i++) {
                out.set(i, tripled(x.get(i)));
            }
        }

        private static final float[] TABLE = {0.5f, 2f, -3f};

        /** Reads a private field: a class beside it cannot, so it has no chunk form. */
        public static void readsPrivateTable(FloatArray out, FloatArray x) {
            for (@Parallel int i = 0; i < out.getSize(); i++) {
                out.set(i, x.get(i) * TABLE[i % 3]);
            }
        }

        private static void privateGrid(KernelContext ctx, IntArray out) {
            int i = ctx.globalIdx();
            out.set(i, tripledInt(i));
        }

        private static int tripledInt(int v) {
            return v * 3;
        }

        public static void grid1(KernelContext ctx, FloatArray out, FloatArray x, float a) {
            int i = ctx.globalIdx();
            if (i < out.getSize()) {
                out.set(i, x.get(i) * a + i);
            }
        }

        public static void grid3(IntArray out, KernelContext ctx, int cols, int rows) {
            int c = ctx.globalIdx();
            int r = ctx.globalIdy();
            int p = ctx.globalIdz();
            out.set((p * rows + r) * cols + c, p * 1_000_000 + r * 1000 + c);
        }
    }

    private static Method kernel(String name) {
        return Arrays.stream(Shapes.class.getDeclaredMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    }

    private static KernelSpec spec(String name) {
        Method m = kernel(name);
        KernelSpec probe = new KernelSpec(name, m, KernelStyle.SERIAL, 0);
        return new KernelSpec(name, m, probe.compile().style(), 0);
    }

    private static FloatArray random(int n, long seed) {
        Random rnd = new Random(seed);
        FloatArray a = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            a.set(i, (float) rnd.nextGaussian());
        }
        return a;
    }

    private static void poison(KernelArray a) {
        a.segment().fill((byte) 0x7f); // NaN as floats, 0x7f7f7f7f as ints
    }

    /** Runs {@code name} spread and as written on copies of {@code args}; every array must end the same. */
    private static void sameAsWritten(String name, LaunchShape shape, Object... args) {
        KernelSpec spec = spec(name);
        Object[] copies = new Object[args.length];
        for (int i = 0; i < args.length; i++) {
            copies[i] = args[i] instanceof FloatArray f ? FloatArray.wrap(copyOf(f))
                    : args[i] instanceof IntArray a ? IntArray.wrap(copyOf(a)) : args[i];
        }
        spread(spec, shape, args);
        JvmKernels.runAsWritten(spec, shape, copies);
        for (int i = 0; i < args.length; i++) {
            if (args[i] instanceof KernelArray a) {
                long at = a.segment().mismatch(((KernelArray) copies[i]).segment());
                assertEquals(-1, at, name + ": argument " + i + " differs from the method run once, at byte " + at);
            }
        }
    }

    /** Through {@link CoreSpread}, as written where it has no form. */
    private static void spread(KernelSpec spec, LaunchShape shape, Object... args) {
        Class<?>[] types = spec.method().getParameterTypes();
        int ctx = Arrays.asList(types).indexOf(KernelContext.class);
        boolean ran = spec.style() == KernelStyle.CONTEXT ? CoreSpread.grid(spec, shape, ctx, args) : CoreSpread.loop(spec, args);
        if (!ran) {
            JvmKernels.runAsWritten(spec, shape, args);
        }
    }

    private static java.lang.foreign.MemorySegment copyOf(KernelArray a) {
        var s = java.lang.foreign.Arena.ofAuto().allocate(a.segment().byteSize(), 8);
        s.copyFrom(a.segment());
        return s;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 17, C - 1, C, C + 1, 7 * C + 13, 1 << 20})
    void loopsGiveTheBitsOfTheMethodRunOnce(int n) {
        LaunchShape one = new LaunchShape(1, 1);
        FloatArray y = random(n, n);
        sameAsWritten("saxpy", one, y, random(n, n + 1), 0.75f);
        FloatArray out = new FloatArray(n + 3);
        poison(out);
        sameAsWritten("offsetInclusive", one, out, 3, n + 2, 1.5, 0x1234_5678_9abcL);
        IntArray ints = new IntArray(n + 5);
        poison(ints);
        sameAsWritten("boundFirst", one, ints, n);
        poison(ints);
        sameAsWritten("skipping", one, ints);
        poison(ints);
        sameAsWritten("aroundTheLoop", one, ints, n);
        FloatArray tripled = new FloatArray(n);
        poison(tripled);
        sameAsWritten("callsPrivate", one, tripled, random(n, 3));
        poison(tripled);
        sameAsWritten("readsPrivateTable", one, tripled, random(n, 4));
    }

    @Test
    void everyLoopShapeButThePrivateFieldHasAChunkForm() {
        for (String name : new String[] {"saxpy", "offsetInclusive", "boundFirst", "skipping", "aroundTheLoop", "readsPastTheEnd", "callsPrivate"}) {
            assertNotNull(SpreadForms.chunks(kernel(name)), name);
        }
        assertNull(SpreadForms.chunks(kernel("readsPrivateTable")), "a class beside it cannot read Shapes.TABLE");
        assertNotNull(SpreadForms.rows(kernel("grid1")));
        assertNotNull(SpreadForms.rows(kernel("privateGrid")), "a private kernel is copied beside, with what it calls");
    }

    @Test
    void aChunkFormRunsItsChunkAndSaysWhetherTheLoopGoesOn() throws Throwable {
        MethodHandle saxpy = SpreadForms.chunks(kernel("saxpy"));
        int n = 2 * C + 100;
        try (FloatArray y = new FloatArray(n); FloatArray x = new FloatArray(n)) {
            x.fill(1f);
            assertEquals(1, (int) saxpy.invokeExact(y, x, 2f, C, 2 * C));
            for (int i = 0; i < n; i++) {
                assertEquals(i >= C && i < 2 * C ? 2f : 0f, y.get(i), "element " + i);
            }
            assertEquals(0, (int) saxpy.invokeExact(y, x, 2f, 2 * C, 3 * C), "the loop ends inside this chunk");
            assertEquals(2f, y.get(n - 1));
            assertEquals(0, (int) saxpy.invokeExact(y, x, 2f, 3 * C, 4 * C), "past the loop's end");
            assertEquals(0f, y.get(0), "chunk 0 never ran");
        }
        MethodHandle offset = SpreadForms.chunks(kernel("offsetInclusive"));
        try (FloatArray out = new FloatArray(64)) {
            out.fill(-1f);
            assertEquals(1, (int) offset.invokeExact(out, 5, 40, 1.0, 0L, 2, 6));
            for (int i = 0; i < 64; i++) {
                assertEquals(i >= 7 && i < 11 ? (float) (2.0 * i + (5 + i)) : -1f, out.get(i), "element " + i);
            }
            assertEquals(0, (int) offset.invokeExact(out, 5, 40, 1.0, 0L, 30, 40), "i <= 40 ends at 35 + 1");
            assertEquals((float) (2.0 * 40 + 45), out.get(40));
            assertEquals(-1f, out.get(41));
        }
        MethodHandle bound = SpreadForms.chunks(kernel("boundFirst"));
        try (IntArray out = new IntArray(10)) {
            assertEquals(1, (int) bound.invokeExact(out, 10, 2, 4));
            assertEquals(0, (int) bound.invokeExact(out, 10, 8, 12));
            assertEquals("[0, 0, 7, 10, 0, 0, 0, 0, 25, 28]", Arrays.toString(out.toArray()));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 255, C, 3 * C + 7, 1 << 20})
    void gridsGiveTheBitsOfTheMethodRunOnce(int n) {
        FloatArray out = new FloatArray(n);
        poison(out);
        sameAsWritten("grid1", LaunchShape.of(WorkerGrid.of(n + 9)), out, random(n, 5), 1.25f);
        int cols = Math.max(1, n / 64);
        IntArray cube = new IntArray(cols * 5 * 3);
        poison(cube);
        sameAsWritten("grid3", LaunchShape.of(WorkerGrid.of(cols, 5, 3)), cube, cols, 5);
        IntArray ints = new IntArray(n);
        poison(ints);
        sameAsWritten("privateGrid", LaunchShape.of(WorkerGrid.of(n)), ints);
    }

    @Test
    void loopsOverFewNarrowArraysTakeLongerChunks() {
        try (FloatArray f = new FloatArray(1); io.gradsync.tasks.api.HalfArray h = new io.gradsync.tasks.api.HalfArray(1)) {
            assertEquals(C, CoreSpread.loopChunk(new Object[] {3, 2f}), "no arrays");
            assertEquals(C, CoreSpread.loopChunk(new Object[] {f, f, f, 2f}), "12 bytes an iteration");
            assertEquals(CoreSpread.CHUNK_BYTES / 4, CoreSpread.loopChunk(new Object[] {f, 2f}));
            assertEquals(CoreSpread.CHUNK_BYTES / 2, CoreSpread.loopChunk(new Object[] {h, 2f}));
            assertEquals(CoreSpread.CHUNK_BYTES / 8, CoreSpread.loopChunk(new Object[] {f, h, h}), "8 bytes: a power of two at most");
        }
    }

    @Test
    void aFailingIterationFailsTheLaunch() {
        int n = 5 * C;
        try (FloatArray out = new FloatArray(n); FloatArray x = new FloatArray(n)) {
            assertThrows(IndexOutOfBoundsException.class, () -> spread(spec("readsPastTheEnd"), new LaunchShape(1, 1), out, x));
        }
    }

    @Test
    void builtInLoopsWithoutAJvmFormAreSpreadToo() {
        int n = 5 * C + 3;
        KernelSpec sumInto = BuiltinKernels.byName("sumInto").orElseThrow();
        assertTrue(sumInto.jvmFastForm().isEmpty(), "sumInto (fp32) has no JVM form of its own");
        assertNotNull(SpreadForms.chunks(sumInto.method()));
        try (FloatArray acc = random(n, 1); FloatArray want = random(n, 1); FloatArray first = random(n, 1); FloatArray x = random(n, 2)) {
            spread(sumInto, new LaunchShape(1, 1), acc, x);
            JvmKernels.runAsWritten(sumInto, new LaunchShape(1, 1), want, x);
            assertEquals(-1, acc.segment().mismatch(want.segment()));
            assertNotEquals(-1, acc.segment().mismatch(first.segment()), "the sums differ from the first input");
        }
    }

    /** Both forms of {@code each} (alone first, or every core at once for long tasks) run every task exactly once, and the woken cores take part. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyTaskRunsOnce(boolean atOnce) {
        int count = 257;
        AtomicIntegerArray runs = new AtomicIntegerArray(count);
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        IntConsumer task = t -> {
            runs.incrementAndGet(t);
            threads.add(Thread.currentThread());
            long until = System.nanoTime() + 200_000; // long enough for a woken core to claim some
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        };
        run(atOnce, count, task);
        for (int t = 0; t < count; t++) {
            assertEquals(1, runs.get(t), "task " + t);
        }
        if (Runtime.getRuntime().availableProcessors() > 1) {
            assertTrue(threads.size() > 1, "one thread ran all " + count + " tasks");
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aFailingTaskFailsTheRunAndLaterTasksAreNotBegun(boolean atOnce) {
        int count = 100_000;
        AtomicInteger begun = new AtomicInteger();
        IntConsumer task = t -> {
            begun.incrementAndGet();
            if (t == 3) {
                throw new IllegalStateException("task 3");
            }
        };
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> run(atOnce, count, task));
        assertEquals("task 3", e.getMessage());
        assertTrue(begun.get() < count, "every task was begun after the failure");
    }

    /**
     * A launch after the helpers have parked ({@link CoreTeam#AWAKE_NANOS} and more since the last)
     * wakes them: its tasks run on more than the caller's thread. Without the unpark that a parked
     * helper needs, the caller runs them all.
     */
    @Test
    void aLaunchAfterTheHelpersParkedWakesThem() throws InterruptedException {
        assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "one core: no helpers");
        for (int attempt = 0; attempt < 3; attempt++) {
            run(true, 64, t -> { });
            Thread.sleep(CoreTeam.AWAKE_NANOS / 1_000_000 + 50);
            Set<Thread> threads = ConcurrentHashMap.newKeySet();
            run(true, 64, notingThreads(threads));
            assertTrue(threads.size() > 1, "the caller ran all 64 tasks after the helpers parked");
        }
    }

    /**
     * A short launch right after one that shared its tasks shares its own at once: the helpers
     * still spin for it, so the caller does not run its first tasks alone. The first of its two
     * tasks to begin waits (up to 20 ms) for the second to begin: they overlap only where the
     * launch offered its tasks before its caller ran the first. Run alone first, the first task
     * ends before the second can begin, however long it waits. Waiting, not a task a few microseconds long, lets a helper
     * that the machine schedules late still show that it was offered the task.
     */
    @Test
    void aShortLaunchWhileTheHelpersSpinSharesAtOnce() {
        assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "one core: no helpers");
        assumeTrue(CoreTeam.AWAKE_NANOS >= 20_000, "helpers that park at once (-Dgradsync.jvmAwakeMicros)");
        AtomicInteger overlapped = new AtomicInteger();
        for (int attempt = 0; attempt < 50 && overlapped.get() == 0; attempt++) {
            run(true, 64, t -> { }); // a launch that shares: its helpers spin afterwards
            CountDownLatch secondBegun = new CountDownLatch(1);
            AtomicInteger begun = new AtomicInteger();
            run(false, 2, t -> {
                if (begun.getAndIncrement() == 1) {
                    secondBegun.countDown();
                    return;
                }
                try { // the first task to begin: does the second begin before it ends?
                    if (secondBegun.await(20, TimeUnit.MILLISECONDS)) {
                        overlapped.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
        }
        assertTrue(overlapped.get() > 0, "every short launch ran its first task alone on its caller while the helpers spun");
    }

    /**
     * Helpers with nothing to do park once they have spun for {@link CoreTeam#AWAKE_NANOS}: a helper
     * that kept spinning would hold a core from every other thread of the program.
     */
    @Test
    void idleHelpersPark() throws InterruptedException {
        assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "one core: no helpers");
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        for (int launch = 0; launch < 3; launch++) { // tasks long enough that the helpers join them
            run(true, 16, notingThreads(threads));
        }
        assertTrue(threads.size() > 1, "no helper joined the launches");
        List<Thread> helpers = List.of();
        for (int attempt = 0; attempt < 20; attempt++) {
            Thread.sleep(CoreTeam.AWAKE_NANOS / 1_000_000 + 50);
            helpers = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("gradsync-core-")).toList();
            if (!helpers.isEmpty() && helpers.stream().allMatch(t -> t.getState() == Thread.State.WAITING)) {
                return;
            }
        }
        fail("helpers still not parked a second after the last launch: "
                + helpers.stream().map(t -> t.getName() + " " + t.getState()).toList());
    }

    /** The helpers are daemons (a program's exit does not wait for them), named for what they are. */
    @Test
    void theHelpersAreNamedDaemons() {
        assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "one core: no helpers");
        run(true, 8, t -> { });
        List<Thread> helpers = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gradsync-core-")).toList();
        assertEquals(Runtime.getRuntime().availableProcessors() - 1, helpers.size(), "one helper per core but the caller's");
        for (Thread t : helpers) {
            assertTrue(t.isDaemon(), t.getName());
        }
    }

    /** A task that fails on a helper's thread fails the launch on the caller's, with that failure. */
    @Test
    void aTaskFailingOnAHelperFailsTheLaunch() {
        assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "one core: no helpers");
        Thread caller = Thread.currentThread();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run(true, 10_000, t -> {
            if (Thread.currentThread() != caller) {
                throw new IllegalArgumentException("on a helper");
            }
            long until = System.nanoTime() + 20_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        }));
        assertEquals("on a helper", e.getMessage());
        // the helpers are free again: the next launch completes, every task once
        AtomicIntegerArray runs = new AtomicIntegerArray(500);
        run(true, 500, runs::incrementAndGet);
        for (int t = 0; t < 500; t++) {
            assertEquals(1, runs.get(t), "task " + t);
        }
    }

    /**
     * Launches from several threads at once, over and over: each runs every one of its tasks
     * exactly once and returns (the launches queue for the helpers).
     */
    @Test
    void concurrentLaunchesEachRunEveryTaskOnce() throws Exception {
        int callers = 4;
        int launches = 200;
        int count = 97;
        try (ExecutorService pool = Executors.newFixedThreadPool(callers)) {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                boolean atOnce = c % 2 == 0;
                done.add(pool.submit(() -> {
                    for (int l = 0; l < launches; l++) {
                        AtomicIntegerArray runs = new AtomicIntegerArray(count);
                        run(atOnce, count, t -> {
                            runs.incrementAndGet(t);
                            Thread.onSpinWait();
                        });
                        for (int t = 0; t < count; t++) {
                            assertEquals(1, runs.get(t), "launch " + l + ", task " + t);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A launch begun while another holds every helper gets them as they come free: its tasks run
     * on more than its caller's thread once the first launch ends, where otherwise its caller would
     * run them all (two JVM devices' streams launch at once in a data-parallel step).
     */
    @Test
    void aLaunchTakesTheHelpersAnotherLaunchFrees() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        assumeTrue(cores > 1, "one core: no helpers");
        java.util.concurrent.CountDownLatch firstHoldsThem = new java.util.concurrent.CountDownLatch(1);
        Set<Thread> second = ConcurrentHashMap.newKeySet();
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            Future<?> a = pool.submit(() -> {
                Thread caller = Thread.currentThread();
                run(true, 4 * cores, t -> {
                    if (Thread.currentThread() == caller) {
                        firstHoldsThem.countDown(); // the caller runs a task once it gave the launch to every helper
                    }
                    sleep(10);
                });
                return null;
            });
            assertTrue(firstHoldsThem.await(10, TimeUnit.SECONDS));
            Future<?> b = pool.submit(() -> {
                run(true, 200, t -> {
                    second.add(Thread.currentThread());
                    sleep(1);
                });
                return null;
            });
            a.get(30, TimeUnit.SECONDS);
            b.get(30, TimeUnit.SECONDS);
        }
        assertTrue(second.size() > 1, "the second launch's 200 tasks all ran on its caller's thread");
    }

    /** A task that notes the thread it runs on in {@code threads}, then spins for a millisecond. */
    private static IntConsumer notingThreads(Set<Thread> threads) {
        return t -> {
            threads.add(Thread.currentThread());
            long until = System.nanoTime() + 1_000_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        };
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Tasks as long as waking every core at once is worth ({@code atOnce}), or as short as a few bytes. */
    private static void run(boolean atOnce, int count, IntConsumer task) {
        CoreSpread.each(count, atOnce ? CoreSpread.LONG_TASK_BYTES : 64, task);
    }
}
