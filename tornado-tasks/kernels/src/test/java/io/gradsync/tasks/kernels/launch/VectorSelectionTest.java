package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.Parallel;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The run-time choice of the vector form ({@link VectorLaunches#width}) from the addresses and
 * counts of a launch's arrays, and its launch shape ({@link VectorLaunches#shape}). No GPU needed.
 */
class VectorSelectionTest {
    /** cuMemAlloc gives 256-byte aligned buffers. */
    private static final long BASE = 0x7f00_0000_0000L;
    private static final long APART = 1 << 24;

    private static CompiledKernel kernel(String name) {
        return BuiltinKernels.byName(name).orElseThrow().compile();
    }

    /** Arrays {@code APART} bytes apart from BASE, plus {@code shifts[i]} bytes, all of {@code n} elements. */
    private static int width(CompiledKernel k, int n, long... shifts) {
        int arrays = KernelIrs.ir(k).arrayParams().size();
        long[] starts = new long[arrays];
        int[] counts = new int[arrays];
        for (int i = 0; i < arrays; i++) {
            starts[i] = BASE + i * APART + (i < shifts.length ? shifts[i] : 0);
        }
        Arrays.fill(counts, n);
        return VectorLaunches.width(k, starts, counts, null);
    }

    @Test
    void alignedArraysOfOneLengthTakeTheVectorForm() {
        assertEquals(8, width(kernel("average2Bf16"), 1000));
        assertEquals(8, width(kernel("average8F16"), 3));
        assertEquals(4, width(kernel("average4"), 1 << 20));
        assertEquals(4, width(kernel("sumInto"), 0), "empty arrays: nothing to misread");
        assertEquals(8, width(kernel("scaleBf16"), 5));
        // 16-byte aligned is enough, 256 is not needed
        assertEquals(8, width(kernel("average2Bf16"), 1000, 16, 32, 48));
        assertEquals(4, width(kernel("average2"), 1000, 16, 16, 16));
    }

    /** As {@link #width}, for {@link VectorLaunches#mergedLoads}. */
    private static boolean merged(CompiledKernel k, long... shifts) {
        int arrays = KernelIrs.ir(k).arrayParams().size();
        long[] starts = new long[arrays];
        for (int i = 0; i < arrays; i++) {
            starts[i] = BASE + i * APART + (i < shifts.length ? shifts[i] : 0);
        }
        return VectorLaunches.mergedLoads(k, starts);
    }

    /** The 16-bit reductions merge loads of their input: it alone must be aligned (8 bytes for quads, 4 for pairs). */
    @Test
    void mergedLoadsNeedTheirInputAligned() {
        assertTrue(merged(kernel("sumOfSquaresBf16")));
        assertTrue(merged(kernel("sumOfSquaresBf16"), 8, 4), "8 bytes is enough; the result may sit anywhere");
        assertFalse(merged(kernel("sumOfSquaresBf16"), 4), "4 bytes is not 8");
        assertFalse(merged(kernel("checkFiniteF16"), 2), "one element off");
        assertTrue(merged(kernel("sumOfSquaresPartialsF16"), 4, 8));
        assertFalse(merged(kernel("sumOfSquaresPartialsF16"), 2));
        assertFalse(merged(kernel("sumOfSquares")), "fp32: nothing merged");
        assertFalse(merged(kernel("average2Bf16")), "element-wise: the vector loop, not merged loads");
        assertEquals(1, width(kernel("sumOfSquaresBf16"), 1000), "not element-wise");
    }

    @Test
    void anArrayOneElementOffTakesTheScalarForm() {
        assertEquals(1, width(kernel("average2Bf16"), 1000, 2, 2, 2), "all shifted by one bf16");
        assertEquals(1, width(kernel("average2Bf16"), 1000, 0, 0, 2), "only a1");
        assertEquals(1, width(kernel("average2Bf16"), 1000, 2), "only out");
        assertEquals(1, width(kernel("average2Bf16"), 1000, 8, 0, 0), "8-byte aligned is not 16");
        assertEquals(1, width(kernel("average4"), 1000, 0, 0, 0, 0, 4));
        assertEquals(1, width(kernel("sumIntoF16"), 1000, 0, 2));
    }

    @Test
    void mixedElementSizesNeedEachArrayAlignedToItsOwnAccess() {
        // f32ToBf16(in, out): 4 elements per access, 16 bytes of fp32 and 8 of bf16
        assertEquals(4, width(kernel("f32ToBf16"), 1000, 0, 8));
        assertEquals(1, width(kernel("f32ToBf16"), 1000, 8, 0), "fp32 input only 8-byte aligned");
        assertEquals(1, width(kernel("f32ToBf16"), 1000, 0, 2), "bf16 output one element off");
        assertEquals(4, width(kernel("bf16ToF32"), 1000, 8, 0));
        assertEquals(1, width(kernel("bf16ToF32"), 1000, 0, 8));
    }

    @Test
    void unequalCountsTakeTheScalarForm() {
        CompiledKernel avg = kernel("average2Bf16");
        long[] starts = {BASE, BASE + APART, BASE + 2 * APART};
        assertEquals(8, VectorLaunches.width(avg, starts, new int[]{100, 100, 100}, null));
        assertEquals(1, VectorLaunches.width(avg, starts, new int[]{100, 101, 100}, null), "an input longer than the bound");
        assertEquals(1, VectorLaunches.width(avg, starts, new int[]{100, 100, 99}, null), "an input shorter than the bound");
        assertEquals(1, VectorLaunches.width(avg, starts, new int[]{101, 100, 100}, null), "the bound array longer");
    }

    /** An optimizer's step: it loads {@code w} after storing {@code m}. */
    static final class LoadAfterStore {
        public static void step(FloatArray w, FloatArray g, FloatArray m) {
            for (@Parallel int i = 0; i < w.getSize(); i++) {
                float mi = 0.9f * m.get(i) + g.get(i);
                m.set(i, mi);
                w.set(i, w.get(i) - 0.01f * mi);
            }
        }
    }

    /**
     * A load after another array's store takes the vector form (which loads first) only where the
     * two arrays lie apart: not where they are one array or overlap, in one address space or one
     * OpenCL buffer; arrays loaded before any store may overlap what is stored.
     */
    @Test
    void aLoadAfterAnotherArraysStoreNeedsThemApart() {
        CompiledKernel k = KernelCompiler.shared().compile(LoadAfterStore.class, "step");
        int[] counts = {64, 64, 64};
        assertEquals(4, VectorLaunches.width(k, new long[]{BASE, BASE + APART, BASE + 2 * APART}, counts, null));
        assertEquals(1, VectorLaunches.width(k, new long[]{BASE, BASE + APART, BASE}, counts, null), "w is m");
        assertEquals(1, VectorLaunches.width(k, new long[]{BASE + 240, BASE + APART, BASE}, counts, null), "w starts in m");
        assertEquals(1, VectorLaunches.width(k, new long[]{BASE, BASE + APART, BASE + 240}, counts, null), "m starts in w");
        assertEquals(4, VectorLaunches.width(k, new long[]{BASE + 256, BASE + APART, BASE}, counts, null), "w right after m");
        assertEquals(4, VectorLaunches.width(k, new long[]{BASE, BASE + 2 * APART, BASE + 2 * APART}, counts, null),
                "g (loaded before any store) is m");
        Object one = new Object();
        Object other = new Object();
        assertEquals(1, VectorLaunches.width(k, new long[]{0, 0, 0}, counts, new Object[]{one, other, one}), "one buffer");
        assertEquals(4, VectorLaunches.width(k, new long[]{0, 0, 0}, counts, new Object[]{one, one, other}), "buffers apart");
    }

    /** A kernel bounded by a scalar: nothing proves which array covers the loop, so all must agree. */
    static final class ScalarBound {
        public static void scaleFirst(FloatArray out, FloatArray in, int n) {
            for (@Parallel int i = 0; i < n; i++) {
                out.set(i, in.get(i) * 0.5f);
            }
        }
    }

    @Test
    void scalarBoundNeedsAllCountsEqual() {
        CompiledKernel k = KernelCompiler.shared().compile(ScalarBound.class, "scaleFirst");
        long[] starts = {BASE, BASE + APART};
        assertEquals(4, VectorLaunches.width(k, starts, new int[]{64, 64}, null));
        assertEquals(1, VectorLaunches.width(k, starts, new int[]{64, 65}, null));
    }

    /** A kernel whose scalar bound it changes itself: the argument is not the loop's bound. */
    static final class ChangedBound {
        public static void scaleMore(FloatArray out, FloatArray in, int n) {
            n = n + 8;
            for (@Parallel int i = 0; i < n; i++) {
                out.set(i, in.get(i) * 0.5f);
            }
        }
    }

    /**
     * Where the accesses are checked, the vector form (which tests no index) runs only where every
     * access is provably in bounds: a loop up to an array's length, or up to a scalar argument no
     * larger than any array the loop accesses.
     */
    @Test
    void aCheckedLaunchTakesTheVectorFormOnlyWithinItsArrays() {
        CompiledKernel scalarBound = KernelCompiler.shared().compile(ScalarBound.class, "scaleFirst");
        FloatArray unused = null; // the arrays' arguments are not read: their counts are given
        assertTrue(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, 64}, new int[]{64, 64}));
        assertTrue(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, 0}, new int[]{64, 64}));
        assertTrue(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, -3}, new int[]{64, 64}), "no iteration");
        assertFalse(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, 65}, new int[]{64, 64}), "one past the end");
        assertFalse(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, 64}, new int[]{64, 63}), "the input shorter");
        assertFalse(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, (1L << 32) + 100}, new int[]{64, 64}),
                "a long for the int bound: the kernel sees its low 32 bits, 100");
        assertTrue(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, (1L << 32) + 64}, new int[]{64, 64}));
        assertTrue(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, 64.9f}, new int[]{64, 64}),
                "a float for the int bound: the kernel sees 64");
        assertFalse(VectorLaunches.staysWithinArrays(scalarBound, new Object[]{unused, unused, 65f}, new int[]{64, 64}));
        CompiledKernel changed = KernelCompiler.shared().compile(ChangedBound.class, "scaleMore");
        assertFalse(VectorLaunches.staysWithinArrays(changed, new Object[]{unused, unused, 8}, new int[]{64, 64}),
                "a bound the kernel assigns proves nothing");
        assertTrue(VectorLaunches.staysWithinArrays(kernel("average2Bf16"), new Object[3], new int[]{5, 5, 5}), "bounded by an array");
        assertFalse(VectorLaunches.staysWithinArrays(kernel("sumOfSquaresBf16"), new Object[3], new int[]{5, 1}), "not element-wise");
    }

    @Test
    void kernelsThatAreNotElementwiseStayScalar() {
        assertEquals(1, width(kernel("checkFinite"), 1000));
        assertEquals(1, width(kernel("sumOfSquaresBf16"), 1000));
        assertEquals(1, width(kernel("sumOfSquaresPartials"), 1000));
    }

    @Test
    void wrongNumberOfArraysIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> VectorLaunches.width(kernel("average2"), new long[]{BASE, BASE}, new int[]{1, 1}, null));
    }

    @Test
    void oneThreadPerElementShrinksToOnePerGroup() {
        int n = (1 << 20) + 3;
        LaunchShape perElement = LaunchShape.forWork(io.gradsync.tasks.compiler.KernelStyle.PARALLEL_LOOP, n, 0);
        // ceil(n / 8) = 131073 threads: 513 groups of 256
        assertEquals(new LaunchShape(513, 256), VectorLaunches.shape(perElement, n, 8));
        assertEquals(new LaunchShape(1025, 256), VectorLaunches.shape(perElement, n, 4));
        assertEquals(new LaunchShape(1, 64), VectorLaunches.shape(new LaunchShape(1, 64), 3, 8));
        assertEquals(new LaunchShape(1, 256), VectorLaunches.shape(new LaunchShape(1, 256), 0, 8), "empty: one group");
        assertEquals(new LaunchShape(2, 64), VectorLaunches.shape(new LaunchShape(4, 64), 129, 2), "65 threads");
    }

    @Test
    void gridStrideLaunchesStay() {
        LaunchShape bounded = new LaunchShape(132 * 8, 256);
        assertSame(bounded, VectorLaunches.shape(bounded, 1L << 28, 8), "fewer threads than elements");
        LaunchShape exact = new LaunchShape(2, 64);
        assertSame(exact, VectorLaunches.shape(exact, 100, 1), "scalar form");
        LaunchShape one = new LaunchShape(1, 64);
        assertSame(one, VectorLaunches.shape(one, 100, 8), "already one group");
    }
}
