package io.gradsync.tasks.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.WorkerGrid;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A kernel that throws on a JVM device fails the execution, naming task, kernel and device (the stream's sticky failure). */
class JvmExecutionFailureTest {
    private final List<JvmDevice> devices = JvmRuntime.createDevices(1);

    @AfterEach
    void close() {
        devices.forEach(JvmDevice::close);
    }

    /** Java's {@code int / 0} throws: on a JVM device the task fails. */
    public static void divide(IntArray x, IntArray out, int by) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            out.set(i, x.get(i) / by);
        }
    }

    @Test
    void aKernelThatThrowsFailsTheExecutionAndLeavesTheHostArraysAsTheyWere() {
        try (IntArray x = IntArray.of(1, 2, 3, 4); IntArray out = IntArray.of(-7, -7, -7, -7)) {
            var graph = new TaskGraph("g")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, x)
                    .task("div", JvmExecutionFailureTest::divide, x, out, 0)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, out)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(devices.getFirst())) {
                IllegalStateException e = assertThrows(IllegalStateException.class, plan::execute);
                for (String part : List.of("task 'div'", "JvmExecutionFailureTest.divide", "jvm:0", "/ by zero")) {
                    assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
                }
                assertArrayEquals(new int[] {-7, -7, -7, -7}, out.toArray(), "the copy back after the failed kernel ran");
            }
        }
    }


    /** Waits at a barrier: every thread of a group must reach it, so the grid must be whole groups. */
    public static void withBarrier(KernelContext ctx, FloatArray x) {
        int i = ctx.globalIdx();
        ctx.localBarrier();
        if (i < x.getSize()) {
            x.set(i, x.get(i) + 1f);
        }
    }

    @Test
    void aGridThatBreaksABarrierRuleFailsTheExecution() {
        try (FloatArray x = new FloatArray(100)) {
            x.fill(2f);
            var graph = new TaskGraph("g")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, x)
                    .task("step", JvmExecutionFailureTest::withBarrier, null, x)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, x)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(devices.getFirst())
                    .withGrid("step", WorkerGrid.of(100).withLocalSize(64))) {
                IllegalStateException e = assertThrows(IllegalStateException.class, plan::execute);
                assertTrue(e.getMessage().contains("task 'step'") && e.getMessage().contains("whole work groups"), e.getMessage());
                assertTrue(e.getMessage().contains("jvm:0"), e.getMessage());
            }
            assertEquals(2f, x.get(0), "the copy back after the failed kernel ran");
        }
    }

    /** Thread 0 of each group skips the barrier the others wait at; on a GPU that is undefined and often hangs. */
    public static void skipsTheBarrierOnThreadZero(KernelContext ctx, IntArray x, IntArray y) {
        int[] shared = ctx.allocateIntLocalArray(64);
        int t = ctx.localIdx();
        shared[t] = x.get(ctx.globalIdx());
        if (t != 0) {
            ctx.localBarrier();
        }
        y.set(ctx.globalIdx(), shared[63 - t]);
    }

    /** Every thread but the last of a group leaves the loop after one barrier; the last waits at a second. */
    public static void lastThreadBarriersOnceMore(KernelContext ctx, IntArray y) {
        int rounds = ctx.localIdx() == ctx.localSize() - 1 ? 2 : 1;
        for (int r = 0; r < rounds; r++) {
            ctx.localBarrier();
        }
        y.set(ctx.globalIdx(), rounds);
    }

    /**
     * A barrier that not every thread of the group reaches fails the execution with the reason,
     * whether the threads that did reach it were waiting when the other returned or came later;
     * it used to wait for ever.
     */
    @Test
    void aBarrierThatAThreadOfTheGroupNeverReachesFailsInsteadOfHanging() {
        int n = 64 * 4;
        try (IntArray x = new IntArray(n); IntArray y = new IntArray(n)) {
            for (var graph : List.of(
                    new TaskGraph("skip").transferToDevice(DataTransferMode.EVERY_EXECUTION, x)
                            .task("t", JvmExecutionFailureTest::skipsTheBarrierOnThreadZero, null, x, y)
                            .transferToHost(DataTransferMode.EVERY_EXECUTION, y).snapshot(),
                    new TaskGraph("once-more")
                            .task("t", JvmExecutionFailureTest::lastThreadBarriersOnceMore, null, y)
                            .transferToHost(DataTransferMode.EVERY_EXECUTION, y).snapshot())) {
                try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(devices.getFirst())
                        .withGrid("t", WorkerGrid.of(n).withLocalSize(64))) {
                    IllegalStateException e = assertThrows(IllegalStateException.class, plan::execute);
                    assertTrue(e.getMessage().contains("task 't'") && e.getMessage().contains("without reaching a barrier"),
                            e.getMessage());
                }
            }
        }
    }

    static volatile boolean failStep;
    static volatile long stepSleepMillis;

    /** {@code w += g}, or a failure, or slow: as a test sets it. */
    public static void addStep(FloatArray w, FloatArray g) {
        if (failStep) {
            throw new IllegalStateException("user kernel failed");
        }
        if (stepSleepMillis > 0) {
            try {
                Thread.sleep(stepSleepMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            w.set(i, w.get(i) + g.get(i));
        }
    }

    /**
     * An execution that failed, or that an interrupt cut short, delivers nothing later: its copy
     * back of the weights was once delivered by the next execution's copy-in, over what the caller
     * had written since (the next step then started from the stale weights).
     */
    @Test
    void anExecutionThatFailedOrWasInterruptedDeliversNothingToTheNextOne() throws Exception {
        for (String how : List.of("throw", "interrupt")) {
            try (FloatArray w = new FloatArray(256); FloatArray g = new FloatArray(256)) {
                g.fill(1f);
                var graph = new TaskGraph("g").transferToDevice(DataTransferMode.EVERY_EXECUTION, w, g)
                        .task("update", JvmExecutionFailureTest::addStep, w, g)
                        .transferToHost(DataTransferMode.EVERY_EXECUTION, w).snapshot();
                try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(devices.getFirst())) {
                    plan.execute();
                    plan.execute(); // w = 2
                    if (how.equals("throw")) {
                        failStep = true;
                        assertThrows(IllegalStateException.class, plan::execute);
                        failStep = false;
                    } else {
                        stepSleepMillis = 300;
                        Thread me = Thread.currentThread();
                        Thread.ofPlatform().start(() -> {
                            try {
                                Thread.sleep(50);
                            } catch (InterruptedException e) {
                                return;
                            }
                            me.interrupt();
                        });
                        assertThrows(IllegalStateException.class, plan::execute);
                        assertTrue(Thread.interrupted(), "the interrupt status is kept");
                        stepSleepMillis = 0;
                    }
                    w.fill(100f); // the caller's own weights
                    plan.execute();
                    assertEquals(101f, w.get(0), how + ": the next execution starts from the caller's weights");
                } finally {
                    failStep = false;
                    stepSleepMillis = 0;
                }
            }
        }
    }
}
