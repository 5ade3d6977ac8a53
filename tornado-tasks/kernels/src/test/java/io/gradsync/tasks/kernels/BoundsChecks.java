package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.api.WorkerGrid;
import io.gradsync.tasks.device.Device;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A user's kernel that indexes past an array: on a CPU OpenCL device (PoCL) the store would land
 * in the JVM's own memory, on a GPU in another allocation or nowhere (an illegal address that
 * leaves the context unusable). Every access is checked instead: the plan throws
 * {@link IndexOutOfBoundsException} naming the array, the index and the length, the accesses in
 * bounds are done, and the device and the plan go on working. Subclasses pick the device: PoCL
 * ({@link OpenClBoundsCheckTest}, in CI), an OpenCL GPU ({@link GpuOpenClBoundsCheckTest}) and a
 * CUDA GPU ({@link GpuCudaBoundsCheckTest}) on the node.
 */
abstract class BoundsChecks {
    /** The device under test (may skip through an assumption). */
    abstract Device device();

    public static void shifted(IntArray x, IntArray y, int shift) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            y.set(i + shift, x.get(i));
        }
    }

    public static void gather(IntArray index, FloatArray src, FloatArray out) {
        for (@Parallel int i = 0; i < index.getSize(); i++) {
            out.set(i, src.get(index.get(i)));
        }
    }

    public static void countLowBits(IntArray x, IntArray counts) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            int[] seen = new int[4];
            seen[x.get(i) & 7] = 1; // past the end for 4..7
            counts.set(i, seen[0] + seen[1] + seen[2] + seen[3]);
        }
    }

    /** An element-wise loop after code that indexes its own array by an argument (past the end for k & 7 in 4..7). */
    public static void scaledByATable(IntArray x, IntArray y, int k) {
        int[] table = new int[4];
        table[k & 7] = 3;
        int f = table[0] + table[1] + table[2] + table[3];
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            y.set(i, f * x.get(i));
        }
    }

    public static void doubledUpTo(FloatArray x, FloatArray y, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            y.set(i, 2 * x.get(i));
        }
    }

    public static void doubled(KernelContext ctx, FloatArray x, FloatArray y) {
        int i = ctx.globalIdx();
        y.set(i, 2 * x.get(i)); // no test against the length: the grid may be larger
    }

    @Test
    void aStorePastTheEndIsSkippedAndReportedAndTheStoresInBoundsAreDone() {
        Device d = device();
        int n = 1000;
        int shift = 3;
        try (IntArray x = new IntArray(n); IntArray y = new IntArray(n)) {
            for (int i = 0; i < n; i++) {
                x.set(i, 7000 + i);
                y.set(i, -1);
            }
            var graph = new TaskGraph("shift").transferToDevice(DataTransferMode.EVERY_EXECUTION, x, y)
                    .task("t", BoundsChecks::shifted, x, y, shift)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, y).snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(d)) {
                IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                String m = e.getMessage();
                assertTrue(m.contains("task t") && m.contains("out of bounds for length " + n) && m.contains("(argument 2)")
                        && m.matches(".*index 10(00|01|02) .*"), m);
                for (int i = 0; i < shift; i++) {
                    assertEquals(-1, y.get(i), "element " + i);
                }
                for (int i = shift; i < n; i++) {
                    assertEquals(7000 + i - shift, y.get(i), "element " + i);
                }
                // the record was read and cleared: the next run reports again, and nothing else broke
                assertThrows(IndexOutOfBoundsException.class, plan::execute);
            }
            var inBounds = new TaskGraph("no-shift").transferToDevice(DataTransferMode.EVERY_EXECUTION, x, y)
                    .task("t", BoundsChecks::shifted, x, y, 0)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, y).snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(inBounds).withDevice(d)) {
                plan.execute();
                for (int i = 0; i < n; i++) {
                    assertEquals(7000 + i, y.get(i), "element " + i);
                }
            }
        }
    }

    /**
     * A loop up to a scalar argument within its arrays runs unchecked in its vector form where it
     * has one (every access is provably in bounds) and gives the Java's values; one past them the
     * plan refuses it before it runs ({@link ExecutionPlanChecks}).
     */
    @Test
    void aLoopUpToAScalarWithinItsArraysRunsExactly() {
        Device d = device();
        int n = 4099;
        Random rnd = new Random();
        try (FloatArray x = new FloatArray(n); FloatArray y = new FloatArray(n)) {
            for (int i = 0; i < n; i++) {
                x.set(i, rnd.nextFloat() - 0.5f);
                y.set(i, Float.NaN);
            }
            for (int bound : new int[] {n, n - 3, n + 1}) {
                var graph = new TaskGraph("upTo").transferToDevice(DataTransferMode.EVERY_EXECUTION, x, y)
                        .task("u", BoundsChecks::doubledUpTo, x, y, bound)
                        .transferToHost(DataTransferMode.EVERY_EXECUTION, y).snapshot();
                try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(d)) {
                    if (bound > n) {
                        assertThrows(IndexOutOfBoundsException.class, plan::execute);
                    } else {
                        plan.execute();
                    }
                }
                for (int i = 0; i < n; i++) {
                    float want = i < bound && bound <= n ? 2 * x.get(i) : Float.NaN;
                    assertEquals(want, y.get(i), "bound " + bound + ", element " + i);
                    y.set(i, Float.NaN);
                }
            }
        }
    }

    /** A load out of bounds reads 0 and is reported; once the indices are fixed, the same plan runs clean. */
    @Test
    void aLoadOutOfBoundsReadsZeroAndTheRecordIsClearedForTheNextRun() {
        Device d = device();
        int n = 4099;
        Random rnd = new Random();
        try (IntArray index = new IntArray(n); FloatArray src = new FloatArray(n); FloatArray out = new FloatArray(n)) {
            for (int i = 0; i < n; i++) {
                index.set(i, rnd.nextInt(n));
                src.set(i, 1 + rnd.nextFloat());
            }
            int bad = rnd.nextInt(n);
            index.set(bad, -5);
            var graph = new TaskGraph("gather").transferToDevice(DataTransferMode.EVERY_EXECUTION, index, src)
                    .task("g", BoundsChecks::gather, index, src, out)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, out).snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(d)) {
                IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                assertTrue(e.getMessage().contains("index -5 out of bounds for length " + n), e.getMessage());
                assertEquals(0f, out.get(bad));
                for (int i = 0; i < n; i++) {
                    if (i != bad) {
                        assertEquals(src.get(index.get(i)), out.get(i), "element " + i);
                    }
                }
                index.set(bad, 0);
                plan.execute();
                for (int i = 0; i < n; i++) {
                    assertEquals(src.get(index.get(i)), out.get(i), "element " + i);
                }
            }
        }
    }

    @Test
    void aPrivateArrayIndexedPastItsEndIsReportedWithItsLength() {
        Device d = device();
        int n = 513;
        try (IntArray x = new IntArray(n); IntArray counts = new IntArray(n)) {
            for (int i = 0; i < n; i++) {
                x.set(i, i % 4); // in bounds but for one element
            }
            x.set(100, 6);
            var graph = new TaskGraph("private").transferToDevice(DataTransferMode.EVERY_EXECUTION, x)
                    .task("p", BoundsChecks::countLowBits, x, counts)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, counts).snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(d)) {
                IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                assertTrue(e.getMessage().contains("index 6 out of bounds for length 4 of its int[4]"), e.getMessage());
                for (int i = 0; i < n; i++) {
                    assertEquals(i == 100 ? 0 : 1, counts.get(i), "element " + i);
                }
            }
        }
    }

    /**
     * An element-wise loop whose code before it indexes its own array past its end is reported as
     * any access is: its vector form, which checks nothing, runs checked launches only where that
     * code's indices are proven; within bounds the same kernel gives Java's result.
     */
    @Test
    void anOwnArrayIndexedPastItsEndBeforeAnElementwiseLoopIsReported() {
        Device d = device();
        int n = 4099;
        for (int k : new int[] {2, 6}) {
            try (IntArray x = new IntArray(n); IntArray y = new IntArray(n)) {
                for (int i = 0; i < n; i++) {
                    x.set(i, i - 7);
                }
                var graph = new TaskGraph("own-" + k).transferToDevice(DataTransferMode.EVERY_EXECUTION, x)
                        .task("t", BoundsChecks::scaledByATable, x, y, k)
                        .transferToHost(DataTransferMode.EVERY_EXECUTION, y).snapshot();
                try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(d)) {
                    if (k == 6) {
                        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                        assertTrue(e.getMessage().contains("index 6 out of bounds for length 4"), e.getMessage());
                    } else {
                        plan.execute();
                        for (int i = 0; i < n; i++) {
                            assertEquals(3 * (i - 7), y.get(i), "element " + i);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aGridLargerThanTheArraysIsReportedAndTheThreadsInBoundsWrite() {
        Device d = device();
        int n = 1000;
        try (FloatArray x = new FloatArray(n); FloatArray y = new FloatArray(n)) {
            for (int i = 0; i < n; i++) {
                x.set(i, i);
            }
            var graph = new TaskGraph("grid").transferToDevice(DataTransferMode.EVERY_EXECUTION, x)
                    .task("c", BoundsChecks::doubled, null, x, y)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, y).snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(d).withGrid("c", WorkerGrid.of(n + 100))) {
                IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                assertTrue(e.getMessage().contains("out of bounds for length " + n), e.getMessage());
                for (int i = 0; i < n; i++) {
                    assertEquals(2f * i, y.get(i), "element " + i);
                }
            }
        }
    }
}
