package io.gradsync.tasks.compiler;

import io.gradsync.tasks.compiler.optimize.AdjacentLoads;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import io.gradsync.tasks.compiler.ir.BoundsFaults;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.opencl.OpenClEmitter;
import io.gradsync.tasks.compiler.ptx.PtxEmitter;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A kernel translated from bytecode, with its device code generated on demand and cached: PTX
 * per compute capability and one OpenCL C program. Thread safe.
 *
 * <p>Device arguments follow {@link KernelParam}: for each Java parameter in order, an array
 * gives a 64-bit global pointer then an {@code int} element count in PTX (a buffer, an
 * {@code int} element offset and an {@code int} count in OpenCL C), a scalar gives its value, a
 * {@code KernelContext} gives three {@code int}s at the end, the grid's thread counts in x, y
 * and z (its {@code globalSize}s). How to launch depends on {@link #style()}.
 */
public final class CompiledKernel {
    static {
        KernelIrs.install(new KernelIrs.Access() {
            @Override
            public KernelIr ir(CompiledKernel kernel) {
                return kernel.ir();
            }

            @Override
            public Optional<ElementwiseLoop> elementwiseLoop(CompiledKernel kernel) {
                return kernel.elementwiseLoop();
            }

            @Override
            public AdjacentLoads adjacentLoads(CompiledKernel kernel) {
                return kernel.merged;
            }
        });
    }

    private final Class<?> owner;
    private final String methodName;
    private final String descriptor;
    private final KernelIr ir;
    private final KernelStyle style;
    private final Map<PtxKey, String> ptxByKey = new ConcurrentHashMap<>();
    private final Optional<ElementwiseLoop> elementwise;
    /** Outside an element-wise loop: the loads its vector form merges ({@link AdjacentLoads}). */
    private final AdjacentLoads merged;
    private volatile String openCl;
    private volatile String openClVector;
    private volatile String openClChecked;

    CompiledKernel(Class<?> owner, String methodName, String descriptor, KernelIr ir, KernelStyle style) {
        this.owner = owner;
        this.methodName = methodName;
        this.descriptor = descriptor;
        this.ir = ir;
        this.style = style;
        this.elementwise = style == KernelStyle.PARALLEL_LOOP ? ElementwiseLoop.find(ir) : Optional.empty();
        this.merged = elementwise.isPresent() ? AdjacentLoads.NONE : AdjacentLoads.find(ir);
    }

    /** Name of the PTX {@code .entry} and of the OpenCL {@code __kernel}. */
    public String entryName() {
        return ir.name();
    }

    public KernelStyle style() {
        return style;
    }

    /** Whether threads of a group wait for each other (a launch must then be whole groups). */
    public boolean usesBarrier() {
        return ir.usesBarrier();
    }

    /** Whether the kernel reduces over warps (then its groups must be whole warps of 32). */
    public boolean usesWarps() {
        return ir.usesWarps();
    }

    /** Whether the kernel has group-local arrays or barriers: on the JVM its groups' threads run at once. */
    public boolean usesGroups() {
        return ir.usesBarrier() || ir.arrays().stream().anyMatch(a -> a.space() == io.gradsync.tasks.compiler.ir.MemArray.Space.GROUP);
    }

    /** Java parameters in order and what each becomes on the device ({@code KernelIrs.parameters}). */
    List<KernelParam> parameters() {
        return ir.params();
    }

    /**
     * Number of device arguments: two per array, one per scalar, and for a KernelContext kernel
     * three more at the end, the {@code int} thread counts of the caller's grid in x, y and z.
     */
    public int deviceArgumentCount() {
        int n = 0;
        for (KernelParam p : ir.params()) {
            n += switch (p) {
                case KernelParam.ArrayParam a -> 2;
                case KernelParam.ScalarParam s -> 1;
                case KernelParam.ContextParam c -> 3;
            };
        }
        return n;
    }

    /** Number of OpenCL kernel arguments (three per array: buffer, element offset, count; one per scalar; the grid's three for a KernelContext). */
    public int openClArgumentCount() {
        int n = 0;
        for (KernelParam p : ir.params()) {
            n += switch (p) {
                case KernelParam.ArrayParam a -> 3;
                case KernelParam.ScalarParam s -> 1;
                case KernelParam.ContextParam c -> 3;
            };
        }
        return n;
    }

    public Class<?> owner() {
        return owner;
    }

    public String methodName() {
        return methodName;
    }

    public String descriptor() {
        return descriptor;
    }

    /** The typed IR, for printing and for combining kernels into one module ({@code KernelIrs.ir}). */
    KernelIr ir() {
        return ir;
    }

    /**
     * True when the kernel is a {@code @Parallel} loop whose every array access is at the loop
     * index in straight-line code ({@link ElementwiseLoop}): it then also has a vectorized PTX form.
     */
    public boolean isElementwise() {
        return elementwise.isPresent();
    }

    /**
     * True when the kernel has a vectorized PTX form: an element-wise kernel's vector loop, or, for
     * another kernel, its loads of adjacent elements merged into vector loads (a reduction reading
     * {@code x[e] .. x[e + 3]}, {@code e} a multiple of 4). Either needs aligned arrays, so only a
     * launch can choose it.
     */
    public boolean hasVectorForm() {
        return elementwise.isPresent() || !merged.isEmpty();
    }

    /** Elements per thread and iteration of the vectorized PTX form of an element-wise kernel; 1 otherwise. */
    public int vectorWidth() {
        return elementwise.map(ElementwiseLoop::width).orElse(1);
    }

    /** The analysis behind {@link #isElementwise()}: which arrays the loop accesses, what bounds it. */
    Optional<ElementwiseLoop> elementwiseLoop() {
        return elementwise;
    }

    /** A complete PTX module holding this kernel, for compute capability {@code sm} (90 for sm_90), every load plain. */
    public String ptx(int sm) {
        return ptx(sm, Set.of());
    }

    /**
     * A complete PTX module holding this kernel for {@code sm}, loading the array parameters named
     * in {@code nonCoherent} with {@code ld.global.nc} (see {@link PtxEmitter}); cached per
     * (sm, set). Only the caller knows that the memory of those arrays is not written during the
     * launch, e.g. by checking the addresses it passes.
     *
     * @throws IllegalArgumentException if a name is not a read-only array parameter of the kernel
     */
    public String ptx(int sm, Set<String> nonCoherent) {
        return ptx(sm, nonCoherent, false);
    }

    /**
     * As {@link #ptx(int, Set)}, and when {@code vectorized} the vector form
     * ({@link #hasVectorForm()}), cached per (sm, set, form): an element-wise kernel's takes
     * {@link #vectorWidth()} elements per thread and access and needs every array the loop accesses
     * aligned to that many elements; another's needs the arrays whose loads it merges aligned to the
     * widest merged load. Only the caller, knowing the addresses, can choose it.
     *
     * @throws IllegalArgumentException also if {@code vectorized} and the kernel has no vector form
     */
    public String ptx(int sm, Set<String> nonCoherent, boolean vectorized) {
        if (vectorized && !hasVectorForm()) {
            throw new IllegalArgumentException(this + " has no vector form: it is not element-wise"
                    + (style == KernelStyle.PARALLEL_LOOP ? " (" + ElementwiseLoop.rejection(ir) + ")" : "")
                    + " and loads no adjacent elements to merge");
        }
        return ptxByKey.computeIfAbsent(new PtxKey(sm, Set.copyOf(nonCoherent), vectorized), k -> {
            String comment = "generated by gradsync from " + ir.source();
            if (!k.nonCoherent().isEmpty()) {
                comment += "\n// non-coherent loads: " + arrayNames(k.nonCoherent());
            }
            if (k.vectorized()) {
                comment += "\n// vectorized: " + (isElementwise() ? vectorWidth() + " elements per thread and access"
                        : "adjacent loads merged, arrays aligned to " + merged.alignments() + " bytes");
            }
            String what = "PTX sm_" + k.sm() + (k.nonCoherent().isEmpty() ? "" : " nc " + arrayNames(k.nonCoherent()))
                    + (k.vectorized() ? (isElementwise() ? " vector x" + vectorWidth() : " merged loads") : "");
            return print(what, PtxEmitter.module(ir, k.sm(), comment, k.nonCoherent(), k.vectorized()));
        });
    }

    private record PtxKey(int sm, Set<String> nonCoherent, boolean vectorized) {
    }

    private final Map<PtxKey, String> checkedPtxByKey = new ConcurrentHashMap<>();

    /**
     * As {@link #ptx(int, Set)} with every array access tested against its array's length first
     * (as {@link #openClChecked()}): the scalar form, and one more parameter, last, the global
     * address of two ints, zeroed, where the first access out of bounds is recorded
     * ({@link #outOfBounds}); such accesses are skipped.
     */
    public String ptxChecked(int sm, Set<String> nonCoherent) {
        return checkedPtxByKey.computeIfAbsent(new PtxKey(sm, Set.copyOf(nonCoherent), false), k -> print("PTX sm_" + k.sm() + " bounds-checked",
                PtxEmitter.checkedModule(ir, k.sm(), "generated by gradsync from " + ir.source() + ", every access checked against its array's length"
                        + (k.nonCoherent().isEmpty() ? "" : "\n// non-coherent loads: " + arrayNames(k.nonCoherent())), k.nonCoherent())));
    }

    /** {@code names} in parameter order (sets have none), for comments. */
    private String arrayNames(Set<String> names) {
        return String.join(", ", ir.arrayParams().stream().map(KernelParam.ArrayParam::name).filter(names::contains).toList());
    }

    /** The names of the array parameters the kernel never writes, in parameter order. */
    public List<String> readOnlyArrays() {
        return ir.arrayParams().stream().map(KernelParam.ArrayParam::name).filter(n -> !ir.writes(n)).toList();
    }

    /** A complete OpenCL C program holding this kernel. */
    public String openCl() {
        String s = openCl;
        if (s == null) {
            s = print("OpenCL C", OpenClEmitter.program(List.of(ir), "generated by gradsync from " + ir.source()));
            openCl = s;
        }
        return s;
    }

    /**
     * As {@link #openCl()} with every array access tested against its array's length first
     * ({@link OpenClEmitter#checkedProgram}): the program for a kernel whose indices nothing
     * vouches for, a user's. It takes one more argument, last: two ints, zeroed, where the first
     * access out of bounds is recorded ({@link BoundsFaults}); such
     * accesses are skipped.
     */
    public String openClChecked() {
        String s = openClChecked;
        if (s == null) {
            s = print("OpenCL C bounds-checked", OpenClEmitter.checkedProgram(ir, "generated by gradsync from " + ir.source()
                    + ", every access checked against its array's length"));
            openClChecked = s;
        }
        return s;
    }

    /**
     * What the first access out of bounds that {@link #openClChecked()} or {@link #ptxChecked} recorded was, as Java's
     * message has it: {@code code} and {@code index} as recorded (a code of 0: none), and
     * {@code lengths} the element count passed for each array parameter, in their order.
     */
    public String outOfBounds(int code, int index, int[] lengths) {
        List<KernelParam.ArrayParam> arrays = ir.arrayParams();
        for (int i = 0; i < arrays.size(); i++) {
            if (BoundsFaults.code(arrays.get(i)) == code) {
                return "index " + index + " out of bounds for length " + (i < lengths.length ? lengths[i] : -1) + " of "
                        + arrays.get(i).name() + " (argument " + (arrays.get(i).javaIndex() + 1) + ")";
            }
        }
        for (var m : ir.arrays()) {
            if (BoundsFaults.code(m) == code) {
                String what = switch (m.space()) {
                    case PRIVATE -> "its " + m.javaTypeName() + "[" + m.length() + "]";
                    case GROUP -> "its group-local " + m.javaTypeName() + "[" + m.length() + "]";
                    case TABLE -> "the static final " + m.javaTypeName() + "[" + m.length() + "] it reads";
                };
                return "index " + index + " out of bounds for length " + m.length() + " of " + what;
            }
        }
        throw new IllegalArgumentException("no array of " + this + " has fault code " + code);
    }

    /**
     * Elements per work item and access of the vectorized OpenCL C form; 1 when the kernel has none
     * (not element-wise, or a 64-bit array: OpenCL's form moves 32-bit words).
     */
    public int openClVectorWidth() {
        return elementwise.filter(OpenClEmitter::hasVectorForm).map(ElementwiseLoop::width).orElse(1);
    }

    /**
     * As {@link #openCl()}, and when {@code vectorized} the vector form of an element-wise kernel
     * ({@link #openClVectorWidth()} elements per work item and access, the same entry name). It needs
     * every array the loop accesses aligned to that many elements; only the launcher, knowing the
     * offsets, can choose it.
     *
     * @throws IllegalArgumentException if {@code vectorized} and the kernel has no such form
     */
    public String openCl(boolean vectorized) {
        if (!vectorized) {
            return openCl();
        }
        if (openClVectorWidth() == 1) {
            throw new IllegalArgumentException(this + " has no OpenCL vector form"
                    + (style == KernelStyle.PARALLEL_LOOP && !isElementwise() ? ": " + ElementwiseLoop.rejection(ir) : ""));
        }
        String s = openClVector;
        if (s == null) {
            s = print("OpenCL C vector x" + openClVectorWidth(), OpenClEmitter.vectorProgram(ir, elementwise.orElseThrow(),
                    "generated by gradsync from " + ir.source() + ", vectorized: " + openClVectorWidth() + " elements per work item and access"));
            openClVector = s;
        }
        return s;
    }

    /** The name of this kernel's entry point in {@link #openCl()}'s program. */
    public String openClKernelName() {
        return OpenClEmitter.kernelName(entryName());
    }

    /**
     * The options {@link #openCl()}'s programs are built with on a device: Java's f32 division and
     * sqrt are correctly rounded, OpenCL's only when asked for (where {@code ieeeDivideSqrt} says
     * the device can); NVIDIA's GPUs also take their float atomic adds as inline PTX, and from
     * compute capability 9.0 ({@code ptxBf16}) their rounding of a double to bf16.
     */
    public static String openClBuildOptions(boolean ieeeDivideSqrt, boolean nvidiaGpu, boolean ptxBf16) {
        String options = ieeeDivideSqrt ? OpenClEmitter.BUILD_OPTIONS_IEEE_DIV_SQRT : "";
        if (nvidiaGpu) {
            options += " " + OpenClEmitter.BUILD_OPTION_PTX_ATOMICS;
        }
        if (nvidiaGpu && ptxBf16) {
            options += " " + OpenClEmitter.BUILD_OPTION_PTX_BF16;
        }
        return options.trim();
    }

    /** Set {@code -Dgradsync.printKernels=true} to print every kernel's device code when it is generated. */
    public static final String PRINT_PROPERTY = "gradsync.printKernels";

    private String print(String what, String code) {
        if (Boolean.getBoolean(PRINT_PROPERTY)) {
            System.out.println("---- " + what + " of " + ir.source() + " ----\n" + code);
        }
        return code;
    }

    @Override
    public String toString() {
        return ir.source() + " -> " + entryName() + " (" + style + ")";
    }
}
