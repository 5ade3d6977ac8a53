package io.gradsync.tasks.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;

/**
 * The threads of one work group on the JVM: their barrier, their warp-reduction slots and the
 * group-local arrays they share. Made by the JVM runtime, one per group it runs at once, and
 * handed to each thread's {@code KernelContext} through {@link GroupContexts}.
 *
 * <p>The barrier knows when a thread has returned from the kernel ({@link #leave}): from then on
 * no barrier of the group can be passed, so a thread waiting at one, or coming to one later, fails
 * with the reason instead of waiting for ever (on a GPU a barrier that not every thread of the
 * group reaches is undefined, and often hangs).
 *
 * <p>Thread-safety: shared by the group's threads; every method may be called from any of them.
 */
public final class WorkGroup {
    private final int threads;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition passed = lock.newCondition();
    /** Guarded by {@link #lock}: threads waiting at the barrier now, the barriers passed, and why it broke. */
    private int arrived;
    private long generation;
    private RuntimeException broken;
    private String firstToLeave;
    private final List<Object> arrays = new ArrayList<>();
    private int[] warpValues;

    /** A group of {@code threads} threads, all of which must call every barrier. */
    public WorkGroup(int threads) {
        this.threads = threads;
    }

    /** The slots a warp reduction exchanges values through: one per thread of the group. */
    public synchronized int[] warpValues(int threads) {
        if (threads % 32 != 0) {
            throw new IllegalArgumentException("warp reductions need work groups of whole warps (32 threads), not " + threads);
        }
        if (warpValues == null) {
            warpValues = new int[threads];
        }
        return warpValues;
    }

    /** The group's {@code ordinal}-th local array, made by the first thread that asks for it. */
    public synchronized Object array(int ordinal, IntFunction<Object> make, int length) {
        while (arrays.size() <= ordinal) {
            arrays.add(null);
        }
        Object a = arrays.get(ordinal);
        if (a == null) {
            a = make.apply(length);
            arrays.set(ordinal, a);
        }
        return a;
    }

    /**
     * Waits until every thread of the group has arrived.
     *
     * @throws IllegalStateException if another thread of the group failed, or returned from the
     *         kernel without reaching this barrier (it can then never be passed)
     */
    public void await() {
        lock.lock();
        try {
            if (broken != null) {
                throw consequence();
            }
            if (firstToLeave != null) {
                broken = diverged(firstToLeave);
                passed.signalAll();
                throw broken;
            }
            if (++arrived == threads) {
                arrived = 0;
                generation++;
                passed.signalAll();
                return;
            }
            long mine = generation;
            while (mine == generation && broken == null) {
                passed.await();
            }
            if (mine == generation) {
                throw consequence();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            broken = new IllegalStateException("interrupted at a barrier", e);
            passed.signalAll();
            throw broken;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Called by a thread ({@code who}, for the message) that returned from the kernel: fails it if
     * other threads of the group wait at a barrier it did not reach, and lets them go.
     */
    public void leave(String who) {
        lock.lock();
        try {
            if (firstToLeave == null) {
                firstToLeave = who;
            }
            if (arrived > 0 && broken == null) {
                broken = diverged(who);
                passed.signalAll();
                throw broken;
            }
        } finally {
            lock.unlock();
        }
    }

    private IllegalStateException diverged(String who) {
        return new IllegalStateException(who + " returned from the kernel without reaching a barrier that other threads of its"
                + " work group reach: every thread of a group must call each barrier (localBarrier, globalBarrier, a warp"
                + " reduction) the same number of times");
    }

    /** What a thread gets when the barrier broke because of another: the cause it points to is a BrokenBarrierException. */
    private static IllegalStateException consequence() {
        return new IllegalStateException("another thread of the group failed before the barrier", new BrokenBarrierException());
    }

    /** Lets the other threads go when one of them failed, instead of waiting for ever. */
    public void abandon() {
        lock.lock();
        try {
            if (broken == null) {
                broken = consequence();
            }
            passed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
