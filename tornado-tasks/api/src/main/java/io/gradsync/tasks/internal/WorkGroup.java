package io.gradsync.tasks.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.function.IntFunction;

/**
 * The threads of one work group on the JVM: their barrier, their warp-reduction slots and the
 * group-local arrays they share. Made by the JVM runtime, one per group it runs at once, and
 * handed to each thread's {@code KernelContext} through {@link GroupContexts}.
 *
 * <p>Thread-safety: shared by the group's threads; every method may be called from any of them.
 */
public final class WorkGroup {
    private final CyclicBarrier barrier;
    private final List<Object> arrays = new ArrayList<>();
    private int[] warpValues;

    /** A group of {@code threads} threads, all of which must call every barrier. */
    public WorkGroup(int threads) {
        this.barrier = new CyclicBarrier(threads);
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

    /** Waits until every thread of the group has arrived. */
    public void await() {
        try {
            barrier.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at a barrier", e);
        } catch (BrokenBarrierException e) {
            throw new IllegalStateException("another thread of the group failed before the barrier", e);
        }
    }

    /** Lets the other threads go when one of them failed, instead of waiting for ever. */
    public void abandon() {
        barrier.reset();
    }
}
