package io.gradsync.bench;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.kernels.launch.LoopBounds;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.internal.JvmKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClQueue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * Times one built-in kernel in each of its forms: the PTX gradsync generates, an nvcc -O3 build
 * of the same kernel in CUDA C ({@link NvccReference}), the generated OpenCL C, and the Java
 * method on the JVM. Device variants are timed with device events around each launch, the JVM
 * one on the host (its work is synchronous); the figure is the median of the timed launches
 * after warm-up. Inputs are fresh random non-zero values: zeros can be faster than data.
 *
 * <p>Effective bandwidth counts each array once if the kernel reads it or writes it, twice if it
 * does both (in place: {@code sumInto*}, {@code scale*}, {@code averageInPlace*}): the traffic a
 * perfect kernel must move, a reduction's partials included. Compare it with the device's copy bandwidth (read + write).
 */
public final class KernelCompare {

    /** The forms of a kernel, in table order. */
    public enum Variant {
        PTX("ptx (generated)"), NVCC("nvcc -O3 (CUDA C)"), OPENCL("opencl (generated)"), JVM("jvm (Java)");

        private final String title;

        Variant(String title) {
            this.title = title;
        }

        public String title() {
            return title;
        }
    }

    /**
     * A timed variant: median time and effective bandwidth, or why it could not run
     * ({@code unavailable} non-null); {@code wrong} counts elements that differ from the Java
     * reference after one launch on the same inputs (-1: not checked).
     */
    public record Cell(double medianMicros, double gbPerSecond, long wrong, String unavailable, boolean failed) {
        public Cell(double medianMicros, double gbPerSecond, long wrong, String unavailable) {
            this(medianMicros, gbPerSecond, wrong, unavailable, false);
        }

        /** n/a because this form failed ({@link #failed()}): the exception's type and first line. */
        public static Cell failed(RuntimeException e) {
            return new Cell(Double.NaN, Double.NaN, -1, e.getClass().getSimpleName() + ": " + Messages.firstLine(e), true);
        }

        /** n/a for a reason of this machine's or this kernel's (no such device, a form it has not). */
        public static Cell na(String why) {
            return new Cell(Double.NaN, Double.NaN, -1, why);
        }

        public boolean ok() {
            return unavailable == null;
        }
    }

    /** How many times to launch. */
    public record Repeats(int warmup, int timed) {
        public Repeats {
            if (warmup < 0 || timed < 1) {
                throw new IllegalArgumentException("--warmup must be >= 0 and --iters >= 1, got " + warmup + " and " + timed);
            }
        }
    }

    /** What the full-length arrays are filled with ({@code compare --data}). */
    public enum Values {
        /** Magnitudes 0.5 to 1.5, either sign: every 16-bit average stays in its float lanes. */
        UNIFORM,
        /**
         * Standard normal values, as gradients are: the replicas of an element often lie far
         * apart in magnitude, and the JVM forms' rare paths (an element done again alone) run.
         */
        NORMAL;

        /** {@code uniform} or {@code normal}, as {@code --data} takes them. */
        public static Values parse(String name) {
            return switch (name) {
                case "uniform" -> UNIFORM;
                case "normal" -> NORMAL;
                default -> throw new IllegalArgumentException("--data must be uniform or normal, got '" + name + "'");
            };
        }
    }

    /** One argument of a kernel as the comparison fills it. */
    record Arg(KernelParam param, ElementKind element, int count, boolean fullLength, Object scalar) {
        long bytes() {
            return (long) count * element.bytes();
        }
    }

    /** Pinned staging per device form: large enough for full-speed copies, small enough to allocate at once. */
    static final long STAGING_BYTES = 32L << 20;

    private KernelCompare() {
    }

    /**
     * The arguments for {@code spec} with {@code n} elements in its full-length arrays: flags
     * ({@code int} arrays) and the one-element results of the atomic reductions hold one element,
     * fp64 partials one slot per reduction thread; a scalar named {@code k} is the input count
     * (the arrays the kernel reads: an average's replicas, in place or not),
     * other scalars 0.999 (repeated launches of {@code scale} must not drift to zero or infinity).
     * Every array of a user's kernel holds {@code n} elements; an integer scalar that bounds its
     * global index ({@code for (@Parallel int i = 0; i < n; i++)}, {@code if (ctx.globalIdx() < n)})
     * is {@code n}, so that the kernel covers the arrays as one bounded by their length does; other
     * integer scalars are 1.
     */
    static List<Arg> arguments(KernelSpec spec, int n) {
        CompiledKernel k = spec.compile();
        List<Arg> args = new ArrayList<>();
        int inputs = readArrays(KernelIrs.ir(k)).size();
        String bound = isUsers(spec) ? LoopBounds.indexParameter(k).orElse(null) : null;
        boolean first = true;
        for (KernelParam p : KernelIrs.parameters(k)) {
            switch (p) {
                case KernelParam.ArrayParam a -> {
                    int count;
                    if (first || isUsers(spec)) {
                        count = n;
                    } else if (a.element() == ElementKind.I32) {
                        count = 1;
                    } else if (spec.style() == KernelStyle.CONTEXT) {
                        count = a.element() == ElementKind.F64 ? Math.max(1, spec.maxThreads()) : 1;
                    } else {
                        count = n;
                    }
                    args.add(new Arg(p, a.element(), count, count == n, null));
                    first = false;
                }
                case KernelParam.ScalarParam s -> {
                    // boxed as the Java parameter's own type: the Java method is called with it
                    Class<?> javaType = spec.method().getParameterTypes()[s.javaIndex()];
                    Object v = switch (s.type()) {
                        case F32 -> s.name().equals("k") ? (float) Math.max(1, inputs) : 0.999f;
                        case F64 -> 0.999;
                        case I32 -> javaType == int.class && s.name().equals(bound) ? (Object) n
                                : javaType == boolean.class ? Boolean.TRUE : javaType == char.class ? (Object) (char) 1
                                : javaType == byte.class ? (Object) (byte) 1 : javaType == short.class ? (Object) (short) 1 : (Object) 1;
                        case I64 -> s.name().equals(bound) ? (long) n : 1L;
                    };
                    args.add(new Arg(p, null, 0, false, v));
                }
                case KernelParam.ContextParam c -> {
                }
            }
        }
        return args;
    }

    /**
     * Bytes a perfect kernel moves per launch (see the class comment). Every array counts, not
     * only the full-length ones: a reduction's fp64 partials are written whole whatever the
     * input's length (524,288 slots, 4 MiB, a quarter of a 16 MiB input's bytes), while its
     * one-element flag or result adds a few bytes.
     */
    static long traffic(KernelSpec spec, List<Arg> args) {
        KernelIr ir = KernelIrs.ir(spec.compile());
        Set<String> read = readArrays(ir);
        long bytes = 0;
        for (Arg a : args) {
            if (a.element() != null) {
                String name = ((KernelParam.ArrayParam) a.param()).name();
                bytes += a.bytes() * ((read.contains(name) ? 1 : 0) + (ir.writes(name) ? 1 : 0));
            }
        }
        return bytes;
    }

    /** The arrays a kernel reads (loads, atomics). */
    private static Set<String> readArrays(KernelIr ir) {
        Set<String> read = new HashSet<>();
        for (Block b : ir.blocks()) {
            for (Insn insn : b.insns()) {
                switch (insn) {
                    case Insn.Load l -> read.add(l.array().name());
                    case Insn.Atomic a -> read.add(a.array().name());
                    case Insn.AtomicAdd a -> read.add(a.array().name());
                    default -> {
                    }
                }
            }
        }
        return read;
    }

    /** Elements in a full-length array when its first array takes {@code bytes}. */
    static int elementsFor(KernelSpec spec, long bytes) {
        ElementKind first = KernelIrs.parameters(spec.compile()).stream().filter(p -> p instanceof KernelParam.ArrayParam)
                .map(p -> ((KernelParam.ArrayParam) p).element()).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(spec.name() + " has no array parameter"));
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE / 8, bytes / first.bytes()));
    }

    static Object[] wrapAll(List<Arg> args, MemorySegment[] segments, int from, int count) {
        Object[] out = new Object[args.size()];
        for (int i = 0; i < args.size(); i++) {
            Arg a = args.get(i);
            if (a.element() == null) {
                out[i] = a.scalar();
                continue;
            }
            // full-length arrays are sliced with the work; flags, results and partials are shared
            MemorySegment s = a.fullLength()
                    ? segments[i].asSlice((long) from * a.element().bytes(), (long) count * a.element().bytes())
                    : segments[i].asSlice(0, a.bytes());
            out[i] = switch (a.element()) {
                case F32 -> FloatArray.wrap(s);
                case F64 -> DoubleArray.wrap(s);
                case I32 -> IntArray.wrap(s);
                case I64 -> LongArray.wrap(s);
                case F16 -> HalfArray.wrap(s);
                case BF16 -> Bfloat16Array.wrap(s);
            };
        }
        return out;
    }

    /** The launch every device form of {@code spec} gets, so that their times compare like with like. */
    static LaunchShape launchShape(KernelSpec spec, int n, int grid) {
        return grid > 0 && spec.style() != KernelStyle.CONTEXT ? new LaunchShape(grid, LaunchShape.DEFAULT_BLOCK) : spec.launchShape(n);
    }

    /**
     * The Java method once over whole arrays: the reference every device form is checked against
     * (through the built-ins' JVM forms, which their tests hold to the methods' bits).
     */
    static void runJava(KernelSpec spec, List<Arg> args, MemorySegment[] segments, int n) {
        if (isUsers(spec)) { // the method as written: a user's kernel has no tested form
            JvmKernels.runAsWritten(spec, spec.launchShape(n), wrapAll(args, segments, 0, n));
            return;
        }
        LaunchShape shape = spec.launchShape(n); // whole arrays, spread over the cores as a plan spreads them
        JvmKernels.run(spec, shape, wrapAll(args, segments, 0, n));
    }

    /**
     * Elements of {@code actual} that differ from {@code expected}; {@code approximate}: within 1e-4
     * relative. Both sides of an atomic fp32 reduction carry their own rounding, in different orders
     * (thousands of partial sums added as they finish): 1e-5 was seen exceeded now and then at 2M elements.
     */
    static long differences(Arg a, MemorySegment expected, MemorySegment actual, boolean approximate) {
        int size = a.element().bytes();
        long first = 0;
        if (!approximate) {
            long m = MemorySegment.mismatch(expected, 0, a.bytes(), actual, 0, a.bytes());
            if (m < 0) {
                return 0; // the common case, without a per-element loop
            }
            first = m / size;
        }
        long wrong = 0;
        for (long i = first; i < a.count(); i++) {
            long at = i * size;
            if (approximate && (a.element() == ElementKind.F32 || a.element() == ElementKind.F64)) {
                double e = a.element() == ElementKind.F32 ? expected.get(ValueLayout.JAVA_FLOAT_UNALIGNED, at)
                        : expected.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, at);
                double x = a.element() == ElementKind.F32 ? actual.get(ValueLayout.JAVA_FLOAT_UNALIGNED, at)
                        : actual.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, at);
                wrong += Math.abs(e - x) <= 1e-4 * Math.abs(e) ? 0 : 1;
            } else if (MemorySegment.mismatch(expected, at, at + size, actual, at, at + size) >= 0
                    && !(isNaN(a.element(), expected, at) && isNaN(a.element(), actual, at))) {
                wrong++; // a NaN's payload is not pinned down by any form: NaN for NaN is right
            }
        }
        return wrong;
    }

    /** Whether the element at byte {@code at} is a NaN of its floating-point kind. */
    static boolean isNaN(ElementKind kind, MemorySegment s, long at) {
        return switch (kind) {
            case F32 -> Float.isNaN(s.get(ValueLayout.JAVA_FLOAT_UNALIGNED, at));
            case F64 -> Double.isNaN(s.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, at));
            case F16 -> (s.get(ValueLayout.JAVA_SHORT_UNALIGNED, at) & 0x7fff) > 0x7c00;
            case BF16 -> (s.get(ValueLayout.JAVA_SHORT_UNALIGNED, at) & 0x7fff) > 0x7f80;
            case I32, I64 -> false;
        };
    }

    // ---------------------------------------------------------------- data

    /**
     * Full-length arrays get random values of {@code values}' kind (uniform: non-zero, magnitude
     * 0.5..1.5, either sign), stored in the array's own format; one-element results and flags start
     * at zero (the kernels add to them).
     */
    static void fill(Arg a, MemorySegment s, long seed, Values values) {
        if (!a.fullLength() && a.element() != ElementKind.F64) {
            s.asSlice(0, a.bytes()).fill((byte) 0);
            return;
        }
        int blocks = Math.max(1, a.count() >>> 20);
        IntStream.range(0, blocks).parallel().forEach(b -> {
            SplittableRandom rnd = new SplittableRandom(seed * 1_000_003L + b);
            int from = (int) ((long) a.count() * b / blocks);
            int to = (int) ((long) a.count() * (b + 1) / blocks);
            for (int i = from; i < to; i++) {
                float v = values == Values.NORMAL ? (float) rnd.nextGaussian()
                        : (float) ((0.5 + rnd.nextDouble()) * (rnd.nextBoolean() ? 1 : -1));
                long at = (long) i * a.element().bytes();
                switch (a.element()) {
                    case F32 -> s.set(ValueLayout.JAVA_FLOAT_UNALIGNED, at, v);
                    case F64 -> s.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, at, v);
                    case I32 -> s.set(ValueLayout.JAVA_INT_UNALIGNED, at, 1 + rnd.nextInt(1000));
                    case I64 -> s.set(ValueLayout.JAVA_LONG_UNALIGNED, at, 1 + rnd.nextInt(1000));
                    // bf16 is the top half of the fp32 bits; truncating keeps a uniform value non-zero
                    case BF16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, (short) (Float.floatToRawIntBits(v) >>> 16));
                    case F16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, Float.floatToFloat16(v));
                }
            }
        });
    }

    static double median(double[] values) {
        return Timing.of(values).medianMicros();
    }

    /** Whether {@code spec} is a user's kernel, not a built-in (which belongs to a family). */
    static boolean isUsers(KernelSpec spec) {
        return spec.family().isEmpty();
    }
}
