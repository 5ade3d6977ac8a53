package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.optimize.AdjacentLoads;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;

import java.util.List;
import java.util.Set;

/**
 * Emits PTX for kernels in {@link KernelIr}: the public entry points (modules, entries, the PTX
 * version per target) of an emitter whose parts each have one concern: {@code KernelEntry} (the
 * entry's parameters and layout), {@code ScalarEmitter} (each IR instruction), {@code VectorForm}
 * (the element-wise vector form), {@code Addresses} (memory operands and immediate-offset
 * folding) and {@code FloatSemantics} (Java's float results where PTX's instruction differs).
 *
 * <p>Every IR variable becomes a virtual register; ptxas does the real register allocation and
 * the optimisation, so this emitter stays a direct mapping. Choices that matter:
 * <ul>
 *   <li>Floating-point arithmetic carries explicit {@code .rn} rounding, which gives Java's IEEE
 *       results and stops ptxas from contracting a multiply and an add into an fma (Java does not).
 *       Denormals are kept (no {@code .ftz}).</li>
 *   <li>Addresses are 64-bit: {@code mul.wide.s32} of the int index by the element size added to
 *       the array's base pointer, the same sequence nvcc emits; {@code x[i]}, {@code x[i + 1]}, ...
 *       share one address register, the constant as the immediate offset.</li>
 *   <li>Loads are plain {@code ld.global} unless the caller names the array as non-coherent
 *       ({@link #entry(KernelIr, int, Set)}): then {@code ld.global.nc}, the read-only data
 *       cache path nvcc takes for a {@code const T* __restrict__} argument. That cache is not kept
 *       coherent with stores made during the kernel, so {@code .nc} is only correct for memory
 *       that nothing writes while the kernel runs. The kernel itself cannot write the array (an
 *       array it writes is refused), but the same memory may also be passed as a written
 *       argument (an in-place average, {@code out} and {@code a0} one buffer), which the PTX
 *       cannot know: only the runtime, seeing the actual addresses, may choose the set
 *       ({@code CudaKernels.prepare} does, per launch). With the empty set (the default) no load
 *       is {@code .nc}.</li>
 *   <li>An element-wise kernel ({@link ElementwiseLoop}) has a second, vectorized form
 *       ({@link #entry(KernelIr, int, Set, boolean)}): each thread takes groups of
 *       {@code width} consecutive elements, so every array moves 8 or 16 bytes per access
 *       ({@code ld/st.global.v2/.v4}) instead of 2 or 4, which is what lets 16-bit kernels reach
 *       copy bandwidth. The loop body is emitted once per element of the group from the same IR
 *       (same operations in the same order, so results are bit for bit those of the scalar form),
 *       loads hoisted into one vector load per array and stores sunk into one vector store. The
 *       last {@code n % width} elements run the scalar body. Vector accesses need every array
 *       aligned to its access size, which only the runtime can check ({@code CudaKernels.prepare}).</li>
 *   <li>Another kernel's vector form merges a thread's loads of adjacent elements of one array
 *       ({@link AdjacentLoads}: {@code x[e] .. x[e + 3]} with {@code e} a proven multiple of 4) into
 *       one {@code ld.global.v2/.v4}, with the same alignment condition: the 16-bit reductions are
 *       bound by their count of load instructions.</li>
 * </ul>
 * The {@code .version} is the lowest PTX ISA version that knows the target (7.8 for sm_90), so
 * the module loads on any driver that runs that GPU.
 */
public final class PtxEmitter {
    private PtxEmitter() {
    }

    /** The lowest PTX ISA version whose ptxas knows {@code sm_<sm>}. */
    public static String ptxVersion(int sm) {
        if (sm >= 120) {
            return "8.7";
        } else if (sm >= 100) {
            return "8.6";
        } else if (sm >= 89) {
            return "7.8";
        } else if (sm >= 87) {
            return "7.4";
        } else if (sm >= 86) {
            return "7.1";
        } else if (sm >= 80) {
            return "7.0";
        } else if (sm >= 75) {
            return "6.3";
        }
        throw new IllegalArgumentException("compute capability sm_" + sm + " is older than the oldest supported (sm_75)");
    }

    /** The module header: version, target, 64-bit addresses. */
    public static String header(int sm, String comment) {
        return "//\n// " + comment + "\n//\n\n.version " + ptxVersion(sm) + "\n.target sm_" + sm + "\n.address_size 64\n\n";
    }

    /** One complete PTX module holding the given kernels as entries, for compute capability {@code sm} (e.g. 90). */
    public static String module(List<KernelIr> kernels, int sm, String comment) {
        StringBuilder b = new StringBuilder(header(sm, comment));
        for (KernelIr k : kernels) {
            b.append(entry(k, sm)).append('\n');
        }
        return b.toString();
    }

    /**
     * One complete PTX module holding {@code kernel}, scalar or vectorized; see
     * {@link #entry(KernelIr, int, Set, boolean)}.
     */
    public static String module(KernelIr kernel, int sm, String comment, Set<String> nonCoherent, boolean vectorized) {
        return header(sm, comment) + entry(kernel, sm, nonCoherent, vectorized) + '\n';
    }

    /** The {@code .entry} of one kernel (without the module header), every load plain {@code ld.global}. */
    public static String entry(KernelIr kernel, int sm) {
        return entry(kernel, sm, Set.of());
    }

    /**
     * The {@code .entry} of one kernel (without the module header), loading the array parameters
     * named in {@code nonCoherent} with {@code ld.global.nc}. The caller must know that no memory
     * of those arrays is written while the kernel runs, by this kernel through another argument
     * or by anything else.
     *
     * @throws IllegalArgumentException if a name is not an array parameter of the kernel, or is
     *                                  one the kernel writes (it would read stale data)
     */
    public static String entry(KernelIr kernel, int sm, Set<String> nonCoherent) {
        return entry(kernel, sm, nonCoherent, false);
    }

    /**
     * As {@link #entry(KernelIr, int, Set)}, and when {@code vectorized} the kernel's vector form: for
     * an element-wise kernel its vector loop, for another its loads of adjacent elements merged into
     * vector loads ({@link AdjacentLoads}). Correct only when every array it accesses so starts at an
     * address aligned to that access ({@link ElementwiseLoop#accessBytes},
     * {@link AdjacentLoads#accessBytes}); the caller checks.
     *
     * @throws IllegalArgumentException also if {@code vectorized} and the kernel has no vector form
     */
    public static String entry(KernelIr kernel, int sm, Set<String> nonCoherent, boolean vectorized) {
        return entry(kernel, sm, nonCoherent, vectorized, false);
    }

    /**
     * One complete PTX module holding {@code kernel} in its scalar form with every array access
     * tested against its array's length first: one out of bounds is skipped (a load reads 0) and
     * the first is recorded ({@link io.gradsync.tasks.compiler.ir.BoundsFaults}) in a last
     * parameter, the global address of two ints the launcher zeroes.
     */
    public static String checkedModule(KernelIr kernel, int sm, String comment, Set<String> nonCoherent) {
        return header(sm, comment) + entry(kernel, sm, nonCoherent, false, true) + '\n';
    }

    private static String entry(KernelIr kernel, int sm, Set<String> nonCoherent, boolean vectorized, boolean checked) {
        ptxVersion(sm);
        checkNonCoherent(kernel, nonCoherent);
        ElementwiseLoop loop = null;
        AdjacentLoads merged = AdjacentLoads.NONE;
        if (vectorized) {
            loop = ElementwiseLoop.find(kernel).orElse(null);
            if (loop == null) {
                merged = AdjacentLoads.find(kernel);
                if (merged.isEmpty()) {
                    throw new IllegalArgumentException("kernel " + kernel.name() + " has no vector form: it is not element-wise ("
                            + ElementwiseLoop.rejection(kernel) + ") and loads no adjacent elements to merge");
                }
            }
        }
        return new KernelEntry(kernel, sm, Set.copyOf(nonCoherent), loop, merged, checked).emit();
    }

    private static void checkNonCoherent(KernelIr kernel, Set<String> nonCoherent) {
        List<String> arrays = kernel.arrayParams().stream().map(ArrayParam::name).toList();
        for (String name : nonCoherent) {
            if (!arrays.contains(name)) {
                throw new IllegalArgumentException("kernel " + kernel.name() + ": non-coherent array " + name
                        + " is not one of its array parameters " + arrays);
            }
            if (kernel.writes(name)) {
                throw new IllegalArgumentException("kernel " + kernel.name() + ": array " + name
                        + " is written by the kernel, so it cannot be loaded non-coherently (ld.global.nc)");
            }
        }
    }
}
