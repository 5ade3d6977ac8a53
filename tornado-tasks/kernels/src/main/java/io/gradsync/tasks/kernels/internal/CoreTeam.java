package io.gradsync.tasks.kernels.internal;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that share a launch's chunks with its caller ({@link CoreSpread}): one per core but
 * the caller's, daemons, started on the first launch that shares. A launch queues its work once
 * for each helper it wants; a helper takes work from the queue in turn and runs it until no chunk
 * is left (work whose launch has ended returns at once), so that a launch begun while the helpers
 * were busy gets them as they finish, in the order launches asked. With the queue empty a helper
 * spins for {@link #AWAKE_NANOS} before it parks: the kernels of a step follow one another
 * closely, and waking a parked thread costs more than a launch of a few megabytes on a virtual
 * machine's idle cores (bench/RESULTS.md, session 39). The spin is short because other threads'
 * work wants those cores too: a parallel stream started while the helpers yielded in turn for
 * 100 us ran at a third to half its speed.
 *
 * <p>{@code -Dgradsync.jvmAwakeMicros} sets how long a helper spins (0: it parks at once).
 *
 * <p>Thread-safety: any thread may {@link #offer}.
 */
final class CoreTeam {
    /** How long a helper spins for the next launch before it parks. */
    static final long AWAKE_NANOS = Math.max(0, Long.getLong("gradsync.jvmAwakeMicros", 50)) * 1000;

    /** When the last launch that offered work ended ({@link System#nanoTime}), 0 before any. */
    private static volatile long lastEnded;

    private CoreTeam() {
    }

    /** Notes that a launch that offered work has ended: its helpers spin for the next one now. */
    static void ended() {
        lastEnded = System.nanoTime();
    }

    /**
     * Whether the helpers of the last launch are likely still spinning for the next: it ended
     * within most of {@link #AWAKE_NANOS}. A launch then need not spare them a wake-up.
     */
    static boolean likelyAwake() {
        long t = lastEnded;
        return t != 0 && System.nanoTime() - t < AWAKE_NANOS * 3 / 4;
    }

    /** The helpers, started when first needed, and the work queued for them. */
    private static final class Helpers {
        static final ConcurrentLinkedQueue<Runnable> QUEUE = new ConcurrentLinkedQueue<>();
        static final Helper[] ALL = start(Math.max(0, Runtime.getRuntime().availableProcessors() - 1));

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
     * Queues {@code work} for {@code wanted} helpers (at most one per helper), each of which runs it
     * once, and wakes as many parked ones. {@code work} must catch its own failures (a helper
     * ignores what escapes) and return at once where its launch has ended.
     */
    static void offer(Runnable work, int wanted) {
        int n = Math.min(wanted, Helpers.ALL.length);
        for (int i = 0; i < n; i++) {
            Helpers.QUEUE.add(work);
        }
        // after queueing: a helper that parks rechecks the queue after saying so (see Helper.next)
        int woken = 0;
        for (Helper h : Helpers.ALL) {
            if (woken == n) {
                break;
            }
            if (h.parked) {
                woken++;
                LockSupport.unpark(h.thread);
            }
        }
    }

    private static final class Helper implements Runnable {
        /** Set before the helper parks and rechecks the queue: a giver that sees it unparks. */
        private volatile boolean parked;
        /** Set while {@link Helpers} is initialized, before any giver can see this helper. */
        private Thread thread;

        @Override
        public void run() {
            while (true) {
                Runnable w = next();
                try {
                    w.run();
                } catch (Throwable ignored) {
                    // CoreSpread's launches record their chunks' failures for the caller; nothing else escapes them
                }
            }
        }

        private Runnable next() {
            long since = System.nanoTime();
            while (true) {
                Runnable w = Helpers.QUEUE.poll();
                if (w != null) {
                    return w;
                }
                if (System.nanoTime() - since < AWAKE_NANOS) {
                    Thread.onSpinWait();
                } else {
                    parked = true;
                    if (Helpers.QUEUE.isEmpty()) {
                        LockSupport.park(this);
                    }
                    parked = false;
                }
            }
        }
    }
}
