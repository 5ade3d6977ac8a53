package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.driver.CudaFunction;
import io.gradsync.tasks.cuda.driver.CudaModule;
import io.gradsync.tasks.cuda.CudaStream;
import jcuda.Pointer;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiled kernels loaded on CUDA GPUs: one module per (GPU, kernel, non-coherent arrays, scalar
 * or vector form), PTX
 * generated for the GPU's own compute capability, loaded once with {@code cuModuleLoadData} and
 * kept for the process.
 *
 * <p>Hot paths {@link #prepare prepare} a launch once (arguments packed in the calling
 * convention of {@link KernelParam}) and {@link PreparedLaunch#launch launch} it every step
 * without allocating.
 *
 * <p>"Restrict verified at run time": {@code prepare} sees the actual addresses, so it loads an
 * array through the read-only data cache ({@code ld.global.nc}, what nvcc does for
 * {@code const T* __restrict__}) when the kernel never writes that parameter and its memory
 * overlaps no array the kernel writes; see {@link #nonCoherentArrays}. An in-place call
 * ({@code out} and {@code a0} the same slice) gets plain loads for {@code a0} only. Set
 * {@code -D}{@value #NON_COHERENT_PROPERTY}{@code =false} to use plain loads everywhere.
 *
 * <p>Likewise for vector accesses: an element-wise kernel ({@link CompiledKernel#isElementwise()})
 * runs in its vectorized form, 8 or 16 bytes per access, when {@code prepare} sees every array
 * aligned for it and all of one length; see {@link VectorLaunches#width}. A slice at an odd element
 * offset gets the scalar form. Set {@code -D}{@value #VECTOR_PROPERTY}{@code =false} to use the
 * scalar form everywhere.
 */
public final class CudaKernels {
    /** System property: {@code false} turns the non-coherent loads of {@link #prepare} off (for comparisons). */
    public static final String NON_COHERENT_PROPERTY = "gradsync.nonCoherentLoads";
    /** System property: {@code false} turns the vectorized forms off, on CUDA and OpenCL alike (for comparisons). */
    public static final String VECTOR_PROPERTY = "gradsync.vectorLoads";
    /**
     * System property, default {@code true}: users' kernels run with every array access tested
     * against its array's length ({@link CompiledKernel#ptxChecked}), as on OpenCL; an access out
     * of bounds is reported by {@link PreparedLaunch#checkBounds}. {@code false} runs them
     * unchecked, where one access out of bounds is undefined, as in CUDA C. The built-in kernels
     * are never checked (their bounds are the launch's).
     */
    public static final String BOUNDS_CHECK_PROPERTY = "gradsync.cudaBoundsChecks";

    private record Key(CudaDevice device, CompiledKernel kernel, Set<String> nonCoherent, boolean vectorized, boolean checked) {
    }

    private static final Map<Key, CudaFunction> FUNCTIONS = new ConcurrentHashMap<>();
    private static final Map<Key, CudaModule> MODULES = new ConcurrentHashMap<>();

    private CudaKernels() {
    }

    /** The kernel's entry point on {@code device}, every load plain, loading its module on first use. */
    public static CudaFunction function(CudaDevice device, CompiledKernel kernel) {
        return function(device, kernel, Set.of());
    }

    /**
     * The kernel's entry point on {@code device} with the arrays in {@code nonCoherent} loaded
     * through {@code ld.global.nc}, loading that module variant on first use. The caller
     * guarantees that nothing writes those arrays' memory during a launch.
     */
    public static CudaFunction function(CudaDevice device, CompiledKernel kernel, Set<String> nonCoherent) {
        return function(device, kernel, nonCoherent, false);
    }

    /**
     * As {@link #function(CudaDevice, CompiledKernel, Set)}, in the vectorized form when
     * {@code vectorized}: the caller also guarantees the alignment of {@link VectorLaunches#width}.
     */
    public static CudaFunction function(CudaDevice device, CompiledKernel kernel, Set<String> nonCoherent, boolean vectorized) {
        return function(device, kernel, nonCoherent, vectorized, false);
    }

    /** As above; {@code checked}: the scalar form with every access tested ({@link CompiledKernel#ptxChecked}). */
    private static CudaFunction function(CudaDevice device, CompiledKernel kernel, Set<String> nonCoherent, boolean vectorized, boolean checked) {
        // per GPU, not per handle: logical devices of one GPU share its context, so its modules
        CudaDevice gpu = device.gpu();
        return FUNCTIONS.computeIfAbsent(new Key(gpu, kernel, Set.copyOf(nonCoherent), vectorized, checked), k -> {
            CudaModule module = CudaModule.load(gpu, k.checked() ? kernel.ptxChecked(device.smVersion(), k.nonCoherent())
                    : kernel.ptx(device.smVersion(), k.nonCoherent(), k.vectorized()));
            MODULES.put(k, module);
            return module.function(kernel.entryName());
        });
    }

    /**
     * The array parameters of {@code kernel} that may be loaded non-coherently for one launch:
     * those the kernel never writes whose byte range overlaps the range of no array it writes.
     * Ranges are half-open, so adjacent slices of one buffer do not overlap, and an empty range
     * overlaps nothing. Read-only arrays may overlap each other (nothing writes either).
     *
     * <p>This trusts the kernel to touch only elements {@code [0, count)} of each array, as the
     * built-ins do when their arrays are of equal length; reading past a slice's end is already
     * outside Java's semantics (an IndexOutOfBoundsException on the JVM).
     *
     * @param starts  device address of each array argument, in the order of the kernel's array parameters
     * @param lengths byte length of each
     * @return the names, in parameter order
     */
    static Set<String> nonCoherentArrays(CompiledKernel kernel, long[] starts, long[] lengths) {
        List<KernelParam.ArrayParam> arrays = KernelIrs.ir(kernel).arrayParams();
        if (starts.length != arrays.size() || lengths.length != arrays.size()) {
            throw new IllegalArgumentException(kernel.entryName() + " has " + arrays.size() + " array parameters, got "
                    + starts.length + " starts and " + lengths.length + " lengths");
        }
        Set<String> nc = new LinkedHashSet<>();
        for (int i = 0; i < arrays.size(); i++) {
            if (KernelIrs.ir(kernel).writes(arrays.get(i).name())) {
                continue;
            }
            boolean aliased = false;
            for (int j = 0; j < arrays.size() && !aliased; j++) {
                aliased = KernelIrs.ir(kernel).writes(arrays.get(j).name()) && overlap(starts[i], lengths[i], starts[j], lengths[j]);
            }
            if (!aliased) {
                nc.add(arrays.get(i).name());
            }
        }
        return Collections.unmodifiableSet(nc);
    }

    /** True when {@code [aStart, aStart + aLength)} and {@code [bStart, bStart + bLength)} share a byte. */
    private static boolean overlap(long aStart, long aLength, long bStart, long bLength) {
        return aLength > 0 && bLength > 0 && aStart < bStart + bLength && bStart < aStart + aLength;
    }

    /**
     * Packs arguments for {@code spec} on {@code device}: one per Java parameter, in order, a
     * {@link DeviceSlice} of a {@link CudaBuffer} per array (it may live on a peer GPU with peer
     * access enabled), a {@link Number} per scalar, nothing for the KernelContext. The launch shape
     * follows {@link KernelSpec#launchShape} for {@code workItems}.
     */
    public static PreparedLaunch prepare(CudaDevice device, KernelSpec spec, long workItems, Object... args) {
        return prepare(device, spec.compile(), spec.launchShape(workItems), args);
    }

    /** As {@link #prepare(CudaDevice, KernelSpec, long, Object...)} for any compiled kernel and shape. */
    public static PreparedLaunch prepare(CudaDevice device, CompiledKernel kernel, LaunchShape shape, Object... args) {
        boolean context = KernelIrs.ir(kernel).params().stream().anyMatch(q -> q instanceof KernelParam.ContextParam);
        Packed packed = pack(kernel, args, context ? 3 : 0);
        if (context) {
            LaunchChecks.context(kernel, shape);
            int slot = packed.slots().length - 3;
            packed.slots()[slot++] = Pointer.to(new int[]{shape.globalX()});
            packed.slots()[slot++] = Pointer.to(new int[]{shape.globalY()});
            packed.slots()[slot] = Pointer.to(new int[]{shape.globalZ()});
        }
        Set<String> nc = Boolean.parseBoolean(System.getProperty(NON_COHERENT_PROPERTY, "true"))
                ? nonCoherentArrays(kernel, packed.starts(), packed.lengths()) : Set.of();
        boolean checks = Boolean.parseBoolean(System.getProperty(BOUNDS_CHECK_PROPERTY, "true")) && io.gradsync.tasks.kernels.KernelFamily.of(kernel.owner()).isEmpty();
        boolean vectorOn = Boolean.parseBoolean(System.getProperty(VECTOR_PROPERTY, "true"));
        // where checked, only a vector form whose every access is provably within its arrays runs unchecked
        int width = vectorOn && (!checks || VectorLaunches.staysWithinArrays(kernel, args, packed.counts()))
                ? VectorLaunches.width(kernel, packed.starts(), packed.counts(), null) : 1;
        boolean vectorized = width > 1 || vectorOn && !checks && VectorLaunches.mergedLoads(kernel, packed.starts());
        BoundsRecord faults = null;
        Pointer[] slots = packed.slots();
        if (checks && !vectorized) {
            faults = new BoundsRecord(device, null, kernel, packed.counts());
            slots = java.util.Arrays.copyOf(slots, slots.length + 1);
            slots[slots.length - 1] = Pointer.to(new long[]{faults.buffer().address()});
        }
        LaunchShape launched = shape;
        if (width > 1) {
            long elements = 0;
            for (int c : packed.counts()) {
                elements = Math.max(elements, c);
            }
            launched = VectorLaunches.shape(shape, elements, width);
        }
        try {
            return new PreparedLaunch(function(device, kernel, nc, vectorized, faults != null), launched, Pointer.to(slots), nc, vectorized,
                    width, faults);
        } catch (RuntimeException e) {
            if (faults != null) {
                faults.close();
            }
            throw e;
        }
    }

    /**
     * A launch of {@code reference}, a kernel another compiler made (nvcc) that takes
     * {@code kernel}'s array and scalar arguments in the same convention (an address and a count per
     * array, scalars by value, no grid dimensions): to time and check it beside the compiled kernel.
     * {@code args} as for {@link #prepare(CudaDevice, CompiledKernel, LaunchShape, Object...)}.
     */
    public static PreparedLaunch prepareReference(CudaFunction reference, CompiledKernel kernel, LaunchShape shape, Object... args) {
        return new PreparedLaunch(reference, shape, Pointer.to(pack(kernel, args, 0).slots()), Set.of(), false, 1, null);
    }

    /**
     * A launch's parameter slots (an address and a count per array, scalars by value, then
     * {@code extra} slots left for the caller) and each array's device range, in the order of the
     * kernel's array parameters.
     */
    private record Packed(Pointer[] slots, long[] starts, long[] lengths, int[] counts) {
    }

    private static Packed pack(CompiledKernel kernel, Object[] args, int extra) {
        List<KernelParam> params = KernelIrs.parameters(kernel);
        long given = params.stream().filter(p -> !(p instanceof KernelParam.ContextParam)).count();
        if (args.length != given) {
            throw new IllegalArgumentException(kernel.entryName() + " takes " + given + " arguments (KernelContext excluded), got " + args.length);
        }
        int arrayCount = KernelIrs.ir(kernel).arrayParams().size();
        Pointer[] slots = new Pointer[2 * arrayCount + (int) given - arrayCount + extra];
        long[] starts = new long[arrayCount];
        long[] lengths = new long[arrayCount];
        int[] counts = new int[arrayCount];
        int arrayIndex = 0;
        int a = 0;
        int slot = 0;
        for (KernelParam p : params) {
            switch (p) {
                case KernelParam.ArrayParam array -> {
                    Object arg = args[a++];
                    if (!(arg instanceof DeviceSlice slice) || !(slice.buffer() instanceof CudaBuffer buffer)) {
                        throw new IllegalArgumentException(kernel.entryName() + ": argument " + p.name() + " must be a DeviceSlice of a CudaBuffer, got " + arg);
                    }
                    slice.check(array.element().bytes(), kernel.entryName() + "(" + p.name() + ")");
                    // the .u64 pointer parameter as a plain 64-bit value: base address plus slice offset
                    long start = buffer.address() + slice.byteOffset();
                    slots[slot++] = Pointer.to(new long[]{start});
                    slots[slot++] = Pointer.to(new int[]{slice.count()});
                    // unified virtual addressing: addresses of buffers on different GPUs never collide
                    starts[arrayIndex] = start;
                    counts[arrayIndex] = slice.count();
                    lengths[arrayIndex++] = (long) slice.count() * array.element().bytes();
                }
                case KernelParam.ScalarParam s -> {
                    Number n = ScalarArgument.of(kernel, p, args[a++]);
                    slots[slot++] = switch (s.type()) {
                        case I32 -> Pointer.to(new int[]{n.intValue()});
                        case I64 -> Pointer.to(new long[]{n.longValue()});
                        case F32 -> Pointer.to(new float[]{n.floatValue()});
                        case F64 -> Pointer.to(new double[]{n.doubleValue()});
                    };
                }
                case KernelParam.ContextParam c -> {
                }
            }
        }
        return new Packed(slots, starts, lengths, counts);
    }

    /**
     * A kernel launch with its arguments packed once; launch it as often as needed. Close it where
     * it checks its accesses ({@link #checkBounds}): its record is device memory.
     */
    public static final class PreparedLaunch implements AutoCloseable {
        private final CudaFunction function;
        private final LaunchShape shape;
        private final Pointer parameters;
        private final Set<String> nonCoherent;
        private final boolean vectorized;
        private final int vectorWidth;
        /** Where a checked launch records an access out of bounds; null for one that checks none. */
        private final BoundsRecord faults;

        PreparedLaunch(CudaFunction function, LaunchShape shape, Pointer parameters, Set<String> nonCoherent, boolean vectorized,
                int vectorWidth, BoundsRecord faults) {
            this.function = function;
            this.shape = shape;
            this.parameters = parameters;
            this.nonCoherent = nonCoherent;
            this.vectorized = vectorized;
            this.vectorWidth = vectorWidth;
            this.faults = faults;
        }

        /** Whether this launch tests its accesses ({@link #checkBounds} has something to read). */
        public boolean checksBounds() {
            return faults != null;
        }

        /**
         * Throws {@link IndexOutOfBoundsException} naming the array and index if a launch since the
         * last check accessed an array out of bounds (waits for {@code stream}, on which those
         * launches ran or after which they finished); nothing to do for a launch that checks none.
         */
        public void checkBounds(CudaStream stream) {
            String fault = faults == null ? null : faults.take(stream);
            if (fault != null) {
                throw new IndexOutOfBoundsException(function.name() + " on " + function.device().id() + ": " + fault
                        + " (the GPU skipped that access and every other one out of bounds)");
            }
        }

        @Override
        public void close() {
            if (faults != null) {
                faults.close();
            }
        }

        /** The shape launched: the one asked for, or fewer groups for the vector form ({@link VectorLaunches#shape}). */
        public LaunchShape shape() {
            return shape;
        }

        /** True when this launch runs the vectorized form of the kernel (its vector loop, or its merged loads). */
        public boolean vectorized() {
            return vectorized;
        }

        /** Elements per thread and access of an element-wise kernel's vector form; 1 for the scalar form and other kernels. */
        public int vectorWidth() {
            return vectorWidth;
        }

        /** The array parameters this launch loads with {@code ld.global.nc}, in parameter order. */
        public Set<String> nonCoherentArrays() {
            return nonCoherent;
        }

        /** Enqueues the kernel on {@code stream} (asynchronous). */
        public void launch(CudaStream stream) {
            function.launch(stream, new int[] {shape.grid(), shape.gridY(), shape.gridZ()},
                    new int[] {shape.block(), shape.blockY(), shape.blockZ()}, 0, parameters);
        }
    }
}
