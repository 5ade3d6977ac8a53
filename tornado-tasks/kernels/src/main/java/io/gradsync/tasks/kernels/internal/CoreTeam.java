package io.gradsync.tasks.kernels.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that share a launch's chunks with its caller ({@link CoreSpread}): one per core but
 * the caller's, daemons, started on the first launch that shares. A helper given a launch's work
 * runs it until no chunk is left, then spins for {@link #AWAKE_NANOS} before it parks: the kernels
 * of a step follow one another closely, and waking a parked thread costs more than a launch of a
 * few megabytes on a virtual machine's idle cores (bench/RESULTS.md, session 39). The spin is
 * short because other threads' work wants those cores too: a parallel stream started while the
 * helpers yielded in turn for 100 us ran at a third to half its speed. A helper still busy with one launch is not
 * given another: a launch takes the helpers that are free when it begins, and its caller gives
 * it to more as they come free ({@link #anyFree}) while it runs.
 *
 * <p>{@code -Dgradsync.jvmAwakeMicros} sets how long a helper spins (0: it parks at once).
 *
 * <p>Thread-safety: any thread may {@link #offer}.
 */
final class CoreTeam {
    /** How long a helper spins for the next launch before it parks. */
    static final long AWAKE_NANOS = Math.max(0, Long.getLong("gradsync.jvmAwakeMicros", 50)) * 1000;

    private CoreTeam() {
    }

    /** The helpers, started when first needed, and how many of them have no work. */
    private static final class Helpers {
        static final Helper[] ALL = start(Math.max(0, Runtime.getRuntime().availableProcessors() - 1));
        static final AtomicInteger FREE = new AtomicInteger(ALL.length);

        private static Helper[] start(int count) {
            Helper[] helpers = new Helper[count];
            for (int i = 0; i < count; i++) {
                helpers[i] = new Helper();
                Thread t = Thread.ofPlatform().daemon().name("gradsync-core-" + (i + 1)).unstarted(helpers[i]);
                helpers[i].thread = t;
                t.start();
            }
            return helpers;
        }
    }

    /**
     * Gives {@code work} to up to {@code wanted} free helpers, each of which runs it once; returns
     * how many took it. {@code work} must catch its own failures (a helper ignores what escapes).
     */
    static int offer(Runnable work, int wanted) {
        int given = 0;
        for (Helper h : Helpers.ALL) {
            if (given == wanted) {
                break;
            }
            if (h.take(work)) {
                given++;
            }
        }
        return given;
    }

    /** Whether a helper may be without work now (a hint: {@link #offer} may still find none). */
    static boolean anyFree() {
        return Helpers.FREE.get() > 0;
    }

    private static final class Helper implements Runnable {
        /** The work given and not yet finished; null while free. */
        private final AtomicReference<Runnable> work = new AtomicReference<>();
        /** Set before the helper parks and rechecks {@link #work}: a giver that sees it unparks. */
        private volatile boolean parked;
        /** Set while {@link Helpers} is initialized, before any giver can see this helper. */
        private Thread thread;

        boolean take(Runnable w) {
            if (!work.compareAndSet(null, w)) {
                return false;
            }
            Helpers.FREE.decrementAndGet();
            if (parked) {
                LockSupport.unpark(thread);
            }
            return true;
        }

        @Override
        public void run() {
            while (true) {
                Runnable w = next();
                try {
                    w.run();
                } catch (Throwable ignored) {
                    // CoreSpread's workers record their chunks' failures for the caller; nothing else escapes them
                }
                work.set(null);
                Helpers.FREE.incrementAndGet();
            }
        }

        private Runnable next() {
            long since = System.nanoTime();
            while (true) {
                Runnable w = work.get();
                if (w != null) {
                    return w;
                }
                if (System.nanoTime() - since < AWAKE_NANOS) {
                    Thread.onSpinWait();
                } else {
                    parked = true;
                    if (work.get() == null) {
                        LockSupport.park(this);
                    }
                    parked = false;
                }
            }
        }
    }
}
