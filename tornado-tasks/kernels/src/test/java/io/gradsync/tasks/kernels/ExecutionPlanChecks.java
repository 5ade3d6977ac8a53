package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.ImmutableTaskGraph;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Task graphs run by an execution plan on one device (subclasses pick it), against the Java result. */
abstract class ExecutionPlanChecks {

    /** The device under test (may skip through an assumption). */
    abstract Device device();

    private static FloatArray random(int n, Random rnd) {
        FloatArray a = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            a.set(i, (float) rnd.nextGaussian());
        }
        return a;
    }

    @Test
    void averageGraphRunsRepeatedlyWithFreshInputs() {
        int n = 10_007;
        Random rnd = new Random();
        try (FloatArray out = new FloatArray(n); FloatArray a = random(n, rnd); FloatArray b = random(n, rnd)) {
            ImmutableTaskGraph graph = new TaskGraph("avg")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, a, b)
                    .task("average", AverageKernels::average2, out, a, b, 2f)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, out)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device())) {
                for (int run = 0; run < 3; run++) {
                    for (int i = 0; i < n; i++) {
                        a.set(i, (float) rnd.nextGaussian());
                    }
                    out.fill(Float.NaN);
                    plan.execute();
                    for (int i = 0; i < n; i++) {
                        assertEquals((float) (((double) a.get(i) + b.get(i)) / 2), out.get(i), "run " + run + " element " + i);
                    }
                }
            }
        }
    }

    /**
     * An element-wise task whose arrays are shorter than its loop (the first array's length) is
     * refused before it runs, naming the short array: a device would read or write past its end.
     * Every array is left as it was.
     */
    @Test
    void elementwiseTaskWithAShortArrayIsRefusedBeforeItRuns() {
        int n = 4099;
        Random rnd = new Random();
        try (FloatArray out = new FloatArray(n); FloatArray a = random(n, rnd); FloatArray shortB = random(n - 3, rnd);
                FloatArray x = random(n, rnd); FloatArray shortY = random(n - 1, rnd)) {
            out.fill(7f);
            float[] before = new float[n - 1];
            for (int i = 0; i < n - 1; i++) {
                before[i] = shortY.get(i);
            }
            ImmutableTaskGraph average = new TaskGraph("short-input")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, a, shortB)
                    .task("average", AverageKernels::average2, out, a, shortB, 2f)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, out)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(average).withDevice(device())) {
                IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                assertTrue(e.getMessage().contains("a1") && e.getMessage().contains("" + (n - 3)), e.getMessage());
            }
            ImmutableTaskGraph sum = new TaskGraph("short-output")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, x, shortY)
                    .task("sum", ElementwiseKernels::sumInto, shortY, x)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, shortY)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(sum).withDevice(device())) {
                // sumInto loops over its first array (acc): a longer x is fine, so this one runs
                plan.execute();
            }
            ImmutableTaskGraph sumIntoLong = new TaskGraph("short-addend")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, x, shortY)
                    .task("sum", ElementwiseKernels::sumInto, x, shortY)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, x)
                    .snapshot();
            float x0 = x.get(0);
            try (ExecutionPlan plan = new ExecutionPlan(sumIntoLong).withDevice(device())) {
                IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                assertTrue(e.getMessage().contains("x has " + (n - 1)), e.getMessage());
            }
            assertEquals(x0, x.get(0), "x was written");
            for (int i = 0; i < n - 1; i++) {
                assertEquals(before[i] + x.get(i), shortY.get(i), "element " + i);
            }
            for (int i = 0; i < n; i++) {
                assertEquals(7f, out.get(i), "out was written at " + i);
            }
        }
    }

    public static void doubledUpTo(FloatArray x, FloatArray y, int n) {
        for (@Parallel int i = 0; i < n; i++) {
            y.set(i, 2 * x.get(i));
        }
    }

    /**
     * An element-wise loop up to a scalar argument larger than an array it accesses is refused
     * before it runs, naming the argument, the array and its length; nothing is written. Up to the
     * arrays' length or less it runs.
     */
    @Test
    void aLoopUpToAScalarPastAnArrayIsRefusedBeforeItRuns() {
        int n = 4099;
        Random rnd = new Random();
        try (FloatArray x = random(n, rnd); FloatArray y = new FloatArray(n - 2)) {
            for (int bound : new int[] {n, n - 1, n - 2, n - 5}) {
                y.fill(7f);
                ImmutableTaskGraph graph = new TaskGraph("up-to")
                        .transferToDevice(DataTransferMode.EVERY_EXECUTION, x, y)
                        .task("u", ExecutionPlanChecks::doubledUpTo, x, y, bound)
                        .transferToHost(DataTransferMode.EVERY_EXECUTION, y)
                        .snapshot();
                try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device())) {
                    if (bound > n - 2) {
                        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, plan::execute);
                        assertTrue(e.getMessage().contains("task u: doubledUpTo loops over indices below n = " + bound
                                + " and accesses y at each, but y has " + (n - 2)), e.getMessage());
                        for (int i = 0; i < n - 2; i++) {
                            assertEquals(7f, y.get(i), "y was written at " + i);
                        }
                    } else {
                        plan.execute();
                        for (int i = 0; i < n - 2; i++) {
                            assertEquals(i < bound ? 2 * x.get(i) : 7f, y.get(i), "bound " + bound + ", element " + i);
                        }
                    }
                }
            }
        }
    }

    @Test
    void firstExecutionTransfersHappenOnce() {
        int n = 1000;
        try (FloatArray x = new FloatArray(n); FloatArray acc = new FloatArray(n)) {
            x.fill(1f);
            ImmutableTaskGraph graph = new TaskGraph("accumulate")
                    .transferToDevice(DataTransferMode.FIRST_EXECUTION, x)
                    .task("sum", ElementwiseKernels::sumInto, acc, x)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, acc)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device())) {
                plan.execute();
                x.fill(100f); // not copied again: the device keeps the first value
                plan.execute();
                plan.execute();
            }
            assertEquals(3f, acc.get(0), "acc stays on the device between runs, x copied once");
            assertEquals(3f, acc.get(n - 1));
        }
    }

    @Test
    void chainedTasksKeepDataOnTheDevice() {
        int n = 4099;
        Random rnd = new Random();
        try (FloatArray acc = random(n, rnd); FloatArray x = random(n, rnd); Bfloat16Array half = new Bfloat16Array(n);
             FloatArray norm = new FloatArray(1)) {
            float[] expected = new float[n];
            double squares = 0;
            for (int i = 0; i < n; i++) {
                expected[i] = (acc.get(i) + x.get(i)) * 0.25f;
                squares += (double) expected[i] * expected[i];
            }
            ImmutableTaskGraph graph = new TaskGraph("chain")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, acc, x)
                    .task("sum", ElementwiseKernels::sumInto, acc, x)
                    .task("scale", ElementwiseKernels::scale, acc, 0.25f)
                    .task("norm", ReductionKernels::sumOfSquares, null, acc, norm)
                    .task("narrow", ConversionKernels::f32ToBf16, acc, half)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, acc, half, norm)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device())) {
                plan.execute();
            }
            for (int i = 0; i < n; i++) {
                assertEquals(expected[i], acc.get(i), "element " + i);
                assertEquals(io.gradsync.tasks.api.HalfFloats.floatToBf16(expected[i]), half.getBits(i), "bf16 " + i);
            }
            assertTrue(Math.abs(norm.get(0) - squares) <= 1e-5 * squares, norm.get(0) + " vs " + squares);
        }
    }

    @Test
    void graphArgumentsAreCheckedWhenTasksAreAdded() {
        try (FloatArray a = new FloatArray(4)) {
            TaskGraph g = new TaskGraph("bad");
            assertThrows(IllegalArgumentException.class, () -> g.task("t", ElementwiseKernels.class.getMethod("scale",
                    FloatArray.class, float.class), a, "x"));
            g.task("t", ElementwiseKernels::scale, a, 2f);
            assertThrows(IllegalArgumentException.class, () -> g.task("t", ElementwiseKernels::scale, a, 2f), "duplicate name");
            // a transfer without a mode or with a null array, and a graph without a name, are refused where written
            IllegalArgumentException noMode = assertThrows(IllegalArgumentException.class, () -> g.transferToDevice(null, a));
            assertTrue(noMode.getMessage().contains("transferToDevice needs a DataTransferMode"), noMode.getMessage());
            IllegalArgumentException nullArray = assertThrows(IllegalArgumentException.class,
                    () -> g.transferToHost(DataTransferMode.EVERY_EXECUTION, a, null));
            assertTrue(nullArray.getMessage().contains("null as array 2 of 2"), nullArray.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new TaskGraph(null));
            assertThrows(IllegalArgumentException.class, () -> new TaskGraph(" "));
        }
    }

    @Test
    void plansBoundToOneSliceShareItAndTouchNothingElse() {
        Device d = device();
        int n = 1000;
        long offset = 512;
        int sentinel = 0x7FC0BEEF;
        try (DeviceBuffer buffer = d.allocate(offset + n * 4L + 512); FloatArray a = new FloatArray(n);
                io.gradsync.tasks.device.DeviceStream stream = d.createStream()) {
            stream.fill32(buffer, 0, buffer.byteSize(), sentinel);
            stream.synchronize();
            for (int i = 0; i < n; i++) {
                a.set(i, i);
            }
            DeviceSlice slice = new DeviceSlice(buffer, offset, n);
            ImmutableTaskGraph first = new TaskGraph("first")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, a)
                    .task("double", ElementwiseKernels::scale, a, 2f)
                    .snapshot();
            ImmutableTaskGraph second = new TaskGraph("second")
                    .task("triple", ElementwiseKernels::scale, a, 3f)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, a)
                    .snapshot();
            try (ExecutionPlan p1 = new ExecutionPlan(first).withDevice(d).bind(a, d, slice);
                    ExecutionPlan p2 = new ExecutionPlan(second).withDevice(d).bind(a, d, slice)) {
                p1.execute();
                a.fill(Float.NaN); // the host copy is stale now: only the device slice holds the data
                p2.execute();
            }
            for (int i = 0; i < n; i++) {
                assertEquals(6f * i, a.get(i), "element " + i);
            }
            try (io.gradsync.tasks.device.HostBuffer host = d.allocateHost(buffer.byteSize())) {
                stream.copyToHost(buffer, 0, host, 0, buffer.byteSize());
                stream.synchronize();
                for (long i = 0; i < buffer.byteSize() / 4; i++) {
                    if (i < offset / 4 || i >= offset / 4 + n) {
                        assertEquals(sentinel, host.segment().getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i), "int " + i + " outside the slice");
                    }
                }
            }
        }
    }

    /** Kernels as a user writes them, in a class of their own that is not public. */
    static final class UserTasks {
        private UserTasks() {
        }

        /** The launch cannot come from the first array: it has one element. */
        public static void scaleByFactor(io.gradsync.tasks.api.KernelContext ctx, FloatArray factor, FloatArray x) {
            int i = ctx.globalIdx();
            x.set(i, x.get(i) * factor.get(0));
        }

        /** An optimizer's step: loads {@code w} after storing {@code m}, element-wise. */
        public static void momentumStep(FloatArray w, FloatArray g, FloatArray m) {
            for (@io.gradsync.tasks.api.Parallel int i = 0; i < w.getSize(); i++) {
                float mi = 0.9f * m.get(i) + g.get(i);
                m.set(i, mi);
                w.set(i, w.get(i) - 0.5f * mi);
            }
        }

        /** An exception handler: no device compiles it; JVM devices run it as Java. */
        public static void javaOnly(FloatArray x) {
            for (int i = 0; i < x.getSize(); i++) {
                try {
                    x.set(i, x.get(i) + Integer.parseInt("2"));
                } catch (NumberFormatException e) {
                    x.set(i, -1f);
                }
            }
        }
    }

    /**
     * A task that loads an array after storing another runs its vector form (which loads first)
     * where the two lie apart, and keeps Java's order where they are one array passed twice: every
     * element as the Java loop leaves it, bit for bit.
     */
    @Test
    void aLoadAfterAnotherArraysStoreKeepsJavasOrderWhenBothAreOneArray() {
        int n = 4099;
        Random rnd = new Random();
        for (boolean oneArray : new boolean[] {false, true}) {
            try (FloatArray w = random(n, rnd); FloatArray g = random(n, rnd); FloatArray other = random(n, rnd);
                    FloatArray javaW = new FloatArray(n); FloatArray javaM = new FloatArray(n)) {
                FloatArray m = oneArray ? w : other;
                for (int i = 0; i < n; i++) {
                    javaW.set(i, w.get(i));
                    javaM.set(i, m.get(i));
                }
                UserTasks.momentumStep(javaW, g, oneArray ? javaW : javaM);
                ImmutableTaskGraph graph = new TaskGraph("step")
                        .transferToDevice(DataTransferMode.EVERY_EXECUTION, w, g, m)
                        .task("step", UserTasks::momentumStep, w, g, m)
                        .transferToHost(DataTransferMode.EVERY_EXECUTION, w, m)
                        .snapshot();
                try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device())) {
                    plan.execute();
                }
                for (int i = 0; i < n; i++) {
                    assertEquals(Float.floatToRawIntBits(javaW.get(i)), Float.floatToRawIntBits(w.get(i)),
                            (oneArray ? "w passed as m too" : "w and m apart") + ": w[" + i + "]");
                    if (!oneArray) {
                        assertEquals(Float.floatToRawIntBits(javaM.get(i)), Float.floatToRawIntBits(m.get(i)), "m[" + i + "]");
                    }
                }
            }
        }
    }

    @Test
    void kernelContextTaskRunsOverItsStatedGridAndIsRefusedWithoutOne() {
        int n = 3000;
        try (FloatArray factor = new FloatArray(1); FloatArray x = random(n, new Random())) {
            factor.set(0, 3f);
            FloatArray want = new FloatArray(n);
            for (int i = 0; i < n; i++) {
                want.set(i, x.get(i) * 3f);
            }
            ImmutableTaskGraph graph = new TaskGraph("scale")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, factor, x)
                    .task("scale", UserTasks::scaleByFactor, null, factor, x)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, x)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device())) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, plan::execute);
                assertTrue(e.getMessage().contains("task scale") && e.getMessage().contains("withGrid"), e.getMessage());
            }
            assertThrows(IllegalArgumentException.class, () -> new ExecutionPlan(graph).withGrid("nope", io.gradsync.tasks.api.WorkerGrid.of(n)));
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device()).withGrid("scale", io.gradsync.tasks.api.WorkerGrid.of(n))) {
                plan.execute();
            }
            assertEquals(-1L, want.segment().mismatch(x.segment()), "every element scaled, not the first 256");
            want.close();
        }
    }

    @Test
    void rejectedKernelRunsAsJavaOnJvmDevicesOnly() {
        try (FloatArray x = random(100, new Random())) {
            float first = x.get(0);
            ImmutableTaskGraph graph = new TaskGraph("java")
                    .transferToDevice(DataTransferMode.EVERY_EXECUTION, x)
                    .task("javaOnly", UserTasks::javaOnly, x)
                    .transferToHost(DataTransferMode.EVERY_EXECUTION, x)
                    .snapshot();
            try (ExecutionPlan plan = new ExecutionPlan(graph).withDevice(device())) {
                if (device().runtime() == io.gradsync.tasks.device.DeviceRuntime.JVM) {
                    plan.execute();
                    assertEquals(first + 2f, x.get(0));
                } else {
                    io.gradsync.tasks.compiler.KernelCompileException e = assertThrows(io.gradsync.tasks.compiler.KernelCompileException.class, plan::execute);
                    assertTrue(e.getMessage().contains("try/catch"), e.getMessage());
                }
            }
        }
    }
}
