package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.optimize.AdjacentLoads;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;

import java.util.List;
import java.util.Optional;

/**
 * When a launch of an element-wise kernel may take its vectorized form (PTX and OpenCL C alike):
 * from where its arrays start and how many elements each has; and the launch shape of that form.
 */
final class VectorLaunches {
    private VectorLaunches() {
    }

    /**
     * The elements per thread and access a launch may use: the kernel's
     * {@link CompiledKernel#vectorWidth()} when it is element-wise and
     * <ul>
     *   <li>every array starts at an address (or, on OpenCL, a byte offset in a buffer whose base is
     *       aligned far beyond) that is a multiple of its vector access
     *       ({@code width} elements: 16 bytes, or 8 for the narrower arrays of a mixed kernel),
     *       as {@code ld/st.global.v2/.v4} require, and</li>
     *   <li>every array the loop accesses has the element count of the array whose length bounds
     *       the loop, or, when the bound is not an array's length, all arrays have one count: the
     *       loop then covers each slice exactly, as the built-ins are meant to be called, and
     *       nothing rests on a kernel reading a longer array only in part, and</li>
     *   <li>an array the loop loads after storing another lies apart from it in memory
     *       ({@link ElementwiseLoop#mustLieApart}): the vector form loads before it stores.</li>
     * </ul>
     * Otherwise 1: the scalar form.
     *
     * @param starts device address of each array argument, in the order of the kernel's array
     *               parameters, or its byte offset in {@code memories[i]}
     * @param counts element count of each
     * @param memories the memory each start counts from (arrays in different ones never overlap),
     *                 or null where the starts are addresses
     */
    static int width(CompiledKernel kernel, long[] starts, int[] counts, Object[] memories) {
        List<KernelParam.ArrayParam> arrays = KernelIrs.ir(kernel).arrayParams();
        if (starts.length != arrays.size() || counts.length != arrays.size()) {
            throw new IllegalArgumentException(kernel.entryName() + " has " + arrays.size() + " array parameters, got "
                    + starts.length + " starts and " + counts.length + " counts");
        }
        ElementwiseLoop loop = KernelIrs.elementwiseLoop(kernel).orElse(null);
        if (loop == null) {
            return 1;
        }
        for (int i = 0; i < arrays.size(); i++) {
            if (starts[i] % loop.accessBytes(arrays.get(i)) != 0) {
                return 1;
            }
        }
        int bound = -1; // the index of the array whose length bounds the loop, if known
        for (int i = 0; i < arrays.size(); i++) {
            if (loop.boundArray().equals(java.util.Optional.of(arrays.get(i).name()))) {
                bound = i;
            }
        }
        for (int i = 0; i < arrays.size(); i++) {
            boolean covered = bound >= 0
                    ? !loop.accessedArrays().contains(arrays.get(i).name()) || counts[i] == counts[bound]
                    : counts[i] == counts[0];
            if (!covered) {
                return 1;
            }
        }
        for (List<KernelParam.ArrayParam> pair : loop.mustLieApart()) {
            int a = arrays.indexOf(pair.get(0));
            int b = arrays.indexOf(pair.get(1));
            boolean sameMemory = memories == null || memories[a] == memories[b];
            if (sameMemory && starts[a] < starts[b] + bytes(arrays.get(b), counts[b]) && starts[b] < starts[a] + bytes(arrays.get(a), counts[a])) {
                return 1;
            }
        }
        return loop.width();
    }

    private static long bytes(KernelParam.ArrayParam array, int count) {
        return (long) count * array.element().bytes();
    }

    /**
     * Whether a bounds-checked launch may take the vector form, which tests no index: the kernel is
     * an element-wise loop (its indices run from 0 below its bound) bounded by an array's length
     * ({@link #width} then holds every accessed array to that length), or by a scalar parameter,
     * never assigned, whose argument here is at most the element count of every array the loop
     * accesses; and the code before the loop indexes its own arrays only within them
     * ({@link ElementwiseLoop#ownArraysInBounds}). {@code args} as the launch takes them (the KernelContext left out); {@code counts}
     * each array argument's element count, in the order of the array parameters.
     */
    static boolean staysWithinArrays(CompiledKernel kernel, Object[] args, int[] counts) {
        ElementwiseLoop loop = KernelIrs.elementwiseLoop(kernel).orElse(null);
        if (loop == null || !loop.ownArraysInBounds()) {
            return false;
        }
        if (loop.boundArray().isPresent()) {
            return true;
        }
        Optional<LoopBounds.ScalarBound> bound = LoopBounds.scalarBound(kernel, args);
        List<KernelParam.ArrayParam> arrays = KernelIrs.ir(kernel).arrayParams();
        if (bound.isEmpty() || counts.length != arrays.size()) {
            return false;
        }
        for (int i = 0; i < arrays.size(); i++) {
            if (loop.accessedArrays().contains(arrays.get(i).name()) && bound.get().value() > counts[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a launch of a kernel that is not element-wise may take its vector form, whose loads of
     * adjacent elements are merged ({@link CompiledKernel#hasVectorForm()}): when every array with
     * merged loads starts at a multiple of its widest merged load (an address, or on OpenCL a byte
     * offset in a buffer whose base is aligned far beyond). The launch shape stays as asked.
     *
     * @param starts device address of each array argument, in the order of the kernel's array parameters
     */
    static boolean mergedLoads(CompiledKernel kernel, long[] starts) {
        AdjacentLoads merged = KernelIrs.adjacentLoads(kernel);
        if (merged.isEmpty()) {
            return false;
        }
        List<KernelParam.ArrayParam> arrays = KernelIrs.ir(kernel).arrayParams();
        for (int i = 0; i < arrays.size(); i++) {
            if (starts[i] % merged.accessBytes(arrays.get(i)) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * The launch for the vector form: a launch of at least one thread per element (the usual
     * {@link LaunchShape#forWork} shape) shrinks to one thread per group of {@code width}, so
     * that no threads start only to find no work; any other shape stays (the loops are
     * grid-stride, so every shape is correct).
     */
    static LaunchShape shape(LaunchShape shape, long elements, int width) {
        if (width <= 1 || shape.globalSize() < elements) {
            return shape;
        }
        long threads = Math.max(1, (elements + width - 1) / width);
        long grid = (threads + shape.block() - 1) / shape.block();
        return grid >= shape.grid() ? shape : new LaunchShape((int) grid, shape.block());
    }

}
