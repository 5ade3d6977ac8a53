package io.gradsync.tasks.kernels.internal;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that share a launch's chunks with its caller ({@link CoreSpread}): one per core but
 * the caller's, daemons, started on the first launch that shares. A launch posts its work in one
 * place that every spinning helper reads, with as many seats as helpers it wants; a helper that
 * sees a new post takes a seat and runs the work until no chunk is left (work whose launch has
 * ended returns at once). Posting costs one write, where queueing an entry per helper on one queue
 * that all of them polled made a launch on 16 cores cost several times a bare team's
 * (bench/RESULTS.md, sessions 43-44). A launch that finds the post taken by another queues its
 * work once for each helper it wants; a helper takes work from the queue in turn, so that a
 * launch begun while the helpers were busy gets them as they finish, in the order launches asked.
 * With neither a new post nor queued work a helper spins for {@link #AWAKE_NANOS} before it
 * parks: the kernels of a step follow one another closely, and waking a parked thread costs more
 * than a launch of a few megabytes on a virtual machine's idle cores (bench/RESULTS.md, session
 * 39). The spin is short because other threads' work wants those cores too: a parallel stream
 * started while the helpers yielded in turn for 100 us ran at a third to half its speed.
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

    /** The posted launch, or null: one at a time. */
    private static final AtomicReference<Post> POSTED = new AtomicReference<>();

    /**
     * A launch's work as posted, with its seats left. {@link #withdraw} drops the work, so that a
     * helper that remembers the last post it saw keeps no launch's arrays alive.
     */
    static final class Post {
        private volatile Runnable work;
        private final AtomicInteger seats;

        private Post(Runnable work, int seats) {
            this.work = work;
            this.seats = new AtomicInteger(seats);
        }

        /** The work, for a helper that takes a seat; null where none is left or the launch ended. */
        private Runnable take() {
            Runnable w = work;
            return w != null && seats.getAndDecrement() > 0 ? w : null;
        }
    }

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
     * Offers {@code work} to {@code wanted} helpers (at most one per helper), each of which runs it
     * once: posted where no other launch's post is there, else queued; and wakes as many parked
     * helpers. {@code work} must catch its own failures (a helper ignores what escapes) and return
     * at once where its launch has ended. Returns the post, which the caller {@link #withdraw}s
     * once its launch has ended, or null where the work was queued.
     */
    static Post offer(Runnable work, int wanted) {
        int n = Math.min(wanted, Helpers.ALL.length);
        Post post = new Post(work, n);
        if (!POSTED.compareAndSet(null, post)) {
            post = null;
            for (int i = 0; i < n; i++) {
                Helpers.QUEUE.add(work);
            }
        }
        // after posting or queueing: a helper that parks rechecks both after saying so (see Helper.next)
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
        return post;
    }

    /** Takes a launch's post down (nothing where {@code post} is null): its work is done. */
    static void withdraw(Post post) {
        if (post != null) {
            post.work = null;
            POSTED.compareAndSet(post, null);
        }
    }

    private static final class Helper implements Runnable {
        /** Set before the helper parks and rechecks the queue: a giver that sees it unparks. */
        private volatile boolean parked;
        /** Set while {@link Helpers} is initialized, before any giver can see this helper. */
        private Thread thread;
        /** The last post this helper looked at: each post is joined once at most. */
        private Post seen;

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
                Runnable w = posted();
                if (w == null) {
                    w = Helpers.QUEUE.poll();
                }
                if (w != null) {
                    return w;
                }
                if (System.nanoTime() - since < AWAKE_NANOS) {
                    Thread.onSpinWait();
                } else {
                    parked = true;
                    Post p = POSTED.get();
                    if ((p == null || p == seen) && Helpers.QUEUE.isEmpty()) {
                        LockSupport.park(this);
                    }
                    parked = false;
                }
            }
        }

        /** The posted work, where there is a post this helper has not looked at and a seat in it. */
        private Runnable posted() {
            Post p = POSTED.get();
            if (p == null || p == seen) {
                return null;
            }
            seen = p;
            return p.take();
        }
    }
}
