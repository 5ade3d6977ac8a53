package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.KernelStyle;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The registry of built-in kernels: every public static method of each {@link KernelFamily}'s
 * class. Found by reflection so that a kernel added there cannot be forgotten here.
 */
public final class BuiltinKernels {
    /**
     * Thread bound of the KernelContext-style built-ins (reductions): enough to keep every SM of a
     * large GPU at full occupancy, so that enough loads are in flight to reach memory bandwidth;
     * the sums then add once per group, not per thread. {@code -Dgradsync.reductionThreads=N}
     * changes it, for measuring.
     */
    public static final int REDUCTION_THREADS = Integer.getInteger("gradsync.reductionThreads", 524288);

    private static final List<KernelSpec> ALL = scan();

    private BuiltinKernels() {
    }

    /** All built-in kernels, sorted by name. */
    public static List<KernelSpec> all() {
        return ALL;
    }

    /** The built-in kernel named {@code name} (its device entry name), if there is one. */
    public static Optional<KernelSpec> byName(String name) {
        return ALL.stream().filter(k -> k.name().equals(name)).findFirst();
    }

    /** The fused fp32 average of {@code k} inputs (2..8). */
    public static KernelSpec average(int k) {
        return byName("average" + k).orElseThrow(() -> new IllegalArgumentException("no fused average for k=" + k + " (2..8)"));
    }

    /** The fused bf16 average of {@code k} inputs (2..8): the float64 sum divided by {@code k}, rounded once. */
    public static KernelSpec averageBf16(int k) {
        return byName("average" + k + "Bf16").orElseThrow(() -> new IllegalArgumentException("no fused average for k=" + k + " (2..8)"));
    }

    /** The fused fp16 average of {@code k} inputs (2..8): the float64 sum divided by {@code k}, rounded once. */
    public static KernelSpec averageF16(int k) {
        return byName("average" + k + "F16").orElseThrow(() -> new IllegalArgumentException("no fused average for k=" + k + " (2..8)"));
    }

    /** The element-wise copy for 4-byte floats (4) or bf16 / fp16 ({@code bf16} true / false) of 2 bytes. */
    public static KernelSpec copy(int elementBytes, boolean bf16) {
        String name = elementBytes == 4 ? "copy" : bf16 ? "copyBf16" : "copyF16";
        return byName(name).orElseThrow();
    }

    private static List<KernelSpec> scan() {
        List<KernelSpec> specs = new ArrayList<>();
        for (KernelFamily family : KernelFamily.values()) {
            for (Method m : family.kernelClass().getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers())) {
                    boolean context = m.getParameterTypes().length > 0
                            && m.getParameterTypes()[0] == io.gradsync.tasks.api.KernelContext.class;
                    specs.add(context
                            ? new KernelSpec(m.getName(), m, KernelStyle.CONTEXT, REDUCTION_THREADS)
                            : new KernelSpec(m.getName(), m, KernelStyle.PARALLEL_LOOP, 0));
                }
            }
        }
        specs.sort(Comparator.comparing(KernelSpec::name));
        return List.copyOf(specs);
    }
}
