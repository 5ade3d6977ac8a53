package io.gradsync.bench;

import io.gradsync.tasks.compiler.ir.KernelIrs;
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
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.JvmKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClQueue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * Times one built-in kernel in each of its forms: the PTX gradsync generates, an nvcc -O3 build
 * of the same kernel in CUDA C ({@link NvccReference}), the generated OpenCL C, and the Java
 * method on the JVM. Device variants are timed with device events around each launch, the JVM
 * one on the host (its work is synchronous); the figure is the median of the timed launches
 * after warm-up. Inputs are fresh random non-zero values: zeros can be faster than data.
 *
 * <p>Effective bandwidth counts each full-length array once, and the first one twice for the
 * in-place kernels ({@code sumInto*}, {@code scale*}), which read and write it: the traffic a
 * perfect kernel must move. Compare it with the device's copy bandwidth (read + write).
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
    public record Cell(double medianMicros, double gbPerSecond, long wrong, String unavailable) {
        /** n/a because this form failed: the exception's type and first line. */
        public static Cell failed(RuntimeException e) {
            return na(e.getClass().getSimpleName() + ": " + Messages.firstLine(e));
        }

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

    /** One argument of a kernel as the comparison fills it. */
    record Arg(KernelParam param, ElementKind element, int count, boolean fullLength, Number scalar) {
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
     * fp64 partials one slot per reduction thread; a scalar named {@code k} is the input count,
     * other scalars 0.999 (repeated launches of {@code scale} must not drift to zero or infinity).
     */
    static List<Arg> arguments(KernelSpec spec, int n) {
        CompiledKernel k = spec.compile();
        List<Arg> args = new ArrayList<>();
        int arrays = (int) KernelIrs.parameters(k).stream().filter(p -> p instanceof KernelParam.ArrayParam).count();
        boolean first = true;
        for (KernelParam p : KernelIrs.parameters(k)) {
            switch (p) {
                case KernelParam.ArrayParam a -> {
                    int count;
                    if (first) {
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
                    Number v = switch (s.type()) {
                        case F32 -> s.name().equals("k") ? (float) Math.max(1, arrays - 1) : 0.999f;
                        case F64 -> 0.999;
                        case I32 -> 1;
                        case I64 -> 1L;
                    };
                    args.add(new Arg(p, null, 0, false, v));
                }
                case KernelParam.ContextParam c -> {
                }
            }
        }
        return args;
    }

    /** Bytes a perfect kernel moves per launch (see the class comment). */
    static long traffic(KernelSpec spec, List<Arg> args) {
        long bytes = 0;
        Arg firstArray = null;
        for (Arg a : args) {
            if (a.element() != null && a.fullLength()) {
                bytes += a.bytes();
                if (firstArray == null) {
                    firstArray = a;
                }
            }
        }
        boolean inPlace = spec.name().startsWith("sumInto") || spec.name().startsWith("scale");
        return inPlace && firstArray != null ? bytes + firstArray.bytes() : bytes;
    }

    /** Elements in a full-length array when its first array takes {@code bytes}. */
    static int elementsFor(KernelSpec spec, long bytes) {
        ElementKind first = KernelIrs.parameters(spec.compile()).stream().filter(p -> p instanceof KernelParam.ArrayParam)
                .map(p -> ((KernelParam.ArrayParam) p).element()).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(spec.name() + " has no array parameter"));
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE / 8, bytes / first.bytes()));
    }

    // ---------------------------------------------------------------- device variants

    /** Runs the kernel {@code launch} (on {@code stream}) timed by events: median microseconds. */
    private static double timeWithEvents(Device device, DeviceStream stream, Runnable launch, Repeats r) {
        for (int i = 0; i < r.warmup(); i++) {
            launch.run();
        }
        stream.synchronize();
        double[] micros = new double[r.timed()];
        try (DeviceEvent start = device.createEvent(); DeviceEvent end = device.createEvent()) {
            for (int i = 0; i < r.timed(); i++) {
                stream.record(start);
                launch.run();
                stream.record(end);
                end.synchronize();
                micros[i] = end.elapsedMillisSince(start) * 1e3;
            }
        }
        return median(micros);
    }

    /** Device copy bandwidth (read + write) of {@code bytes}, timed like the kernels. */
    public static double copyBandwidth(Device device, long bytes, Repeats r) {
        try (DeviceBuffer a = device.allocate(bytes); DeviceBuffer b = device.allocate(bytes); DeviceStream s = device.createStream()) {
            s.fill32(a, 0, bytes & ~3L, 0x3F800001);
            double micros = timeWithEvents(device, s, () -> s.copy(a, 0, b, 0, bytes), r);
            return 2.0 * bytes / (micros * 1e3);
        }
    }

    /**
     * The kernel in each device form at once: each prepared on the same fresh random inputs (one set
     * per buffer size, in {@code memory}, kept by the caller from kernel to kernel) and checked against
     * one run of the Java method,
     * then timed in interleaved rounds (one launch of every form per round), so that clock and
     * thermal drift over the run fall on all forms alike; medians per form. A form that fails is
     * n/a with its reason, the others go on.
     */
    public static Map<Variant, Cell> onDevices(Map<Variant, Device> devices, Map<Variant, Long> bytes, KernelSpec spec,
            int grid, Repeats r, NvccReference nvcc, boolean check, Map<Long, HostMemory> memory) {
        Map<Variant, Cell> cells = new EnumMap<>(Variant.class);
        Map<Long, Inputs> inputs = new java.util.HashMap<>(); // one set per size, shared by the forms at that size
        Map<Variant, OnDevice> ready = new EnumMap<>(Variant.class);
        Map<Variant, Long> wrong = new EnumMap<>(Variant.class);
        List<DeviceEvent> events = new ArrayList<>();
        try {
            for (var e : devices.entrySet()) {
                try {
                    long size = bytes.get(e.getKey());
                    Inputs in = inputs.computeIfAbsent(size, b -> memory.computeIfAbsent(b, x -> new HostMemory()).inputs(spec, b));
                    OnDevice k = OnDevice.prepare(e.getKey(), e.getValue(), in, grid, nvcc);
                    try {
                        wrong.put(e.getKey(), check ? k.countWrong() : -1L); // first launch, on the inputs as filled
                    } catch (RuntimeException ex) {
                        k.close();
                        throw ex;
                    }
                    ready.put(e.getKey(), k);
                } catch (RuntimeException ex) {
                    cells.put(e.getKey(), Cell.failed(ex));
                }
            }
            Map<Variant, DeviceEvent[]> marks = new EnumMap<>(Variant.class);
            for (var e : ready.entrySet()) {
                DeviceEvent[] m = {e.getValue().stream().device().createEvent(), e.getValue().stream().device().createEvent()};
                events.addAll(List.of(m));
                marks.put(e.getKey(), m);
            }
            Map<Variant, double[]> micros = new EnumMap<>(Variant.class);
            ready.keySet().forEach(v -> micros.put(v, new double[r.timed()]));
            // rounds -warmup..-1 are not timed; a form that fails in any round is n/a, the others go on
            for (int i = -r.warmup(); i < r.timed(); i++) {
                for (var it = ready.entrySet().iterator(); it.hasNext(); ) {
                    var e = it.next();
                    try {
                        DeviceStream s = e.getValue().stream();
                        DeviceEvent[] m = marks.get(e.getKey());
                        s.record(m[0]);
                        e.getValue().launch();
                        s.record(m[1]);
                        m[1].synchronize();
                        if (i >= 0) {
                            micros.get(e.getKey())[i] = m[1].elapsedMillisSince(m[0]) * 1e3;
                        }
                    } catch (RuntimeException ex) {
                        cells.put(e.getKey(), Cell.failed(ex));
                        e.getValue().close();
                        it.remove();
                    }
                }
            }
            for (var e : ready.entrySet()) {
                double median = median(micros.get(e.getKey()));
                cells.put(e.getKey(), new Cell(median, e.getValue().trafficBytes() / (median * 1e3), wrong.get(e.getKey()), null));
            }
            return cells;
        } finally {
            events.forEach(DeviceEvent::close);
            ready.values().forEach(OnDevice::close);
        }
    }


    /**
     * Host memory for a kernel's inputs and reference results, kept from kernel to kernel and grown
     * when a kernel needs more: fresh memory is slow to touch on some VMs (the GPU node's grows as
     * it is first used), and a kernel at 256 MiB per buffer needs gigabytes of it.
     */
    public static final class HostMemory implements AutoCloseable {
        private Arena arena;
        private MemorySegment block;

        /**
         * Fresh random inputs for {@code spec} with {@code bytes} in its first array, in this
         * memory; the previous inputs taken from it are invalid from here on.
         */
        public Inputs inputs(KernelSpec spec, long bytes) {
            int n = elementsFor(spec, bytes);
            List<Arg> args = arguments(spec, n);
            long need = 0;
            for (Arg a : args) {
                need += a.element() == null ? 0 : 2 * align(Math.max(8, a.bytes()));
            }
            if (block == null || block.byteSize() < need) {
                close();
                arena = Arena.ofShared();
                block = arena.allocate(Math.max(64, need), 64);
            }
            MemorySegment[] values = new MemorySegment[args.size()];
            MemorySegment[] expected = new MemorySegment[args.size()];
            long at = 0;
            long seed = System.nanoTime();
            for (int i = 0; i < args.size(); i++) {
                Arg a = args.get(i);
                if (a.element() == null) {
                    continue;
                }
                long size = align(Math.max(8, a.bytes()));
                values[i] = block.asSlice(at, a.bytes());
                expected[i] = block.asSlice(at + size, a.bytes());
                at += 2 * size;
                fill(a, values[i], seed + i);
            }
            return new Inputs(spec, args, n, values, expected);
        }

        private static long align(long bytes) {
            return (bytes + 63) & ~63L;
        }

        @Override
        public void close() {
            if (arena != null) {
                arena.close();
                arena = null;
                block = null;
            }
        }
    }

    /**
     * One kernel's arguments filled once with random non-zero values, shared by every device form at
     * that size, and the Java method's results on them, computed on first use.
     */
    public static final class Inputs {
        private final KernelSpec spec;
        private final List<Arg> args;
        private final int n;
        private final MemorySegment[] values;
        private final MemorySegment[] expected;
        private boolean computed;

        private Inputs(KernelSpec spec, List<Arg> args, int n, MemorySegment[] values, MemorySegment[] expected) {
            this.spec = spec;
            this.args = args;
            this.n = n;
            this.values = values;
            this.expected = expected;
        }

        /** The Java method run once on a copy of the values: what every form must produce. */
        synchronized MemorySegment[] expected() {
            if (!computed) {
                for (int i = 0; i < values.length; i++) {
                    if (values[i] != null) {
                        expected[i].copyFrom(values[i]);
                    }
                }
                runJava(spec, args, expected, n);
                computed = true;
            }
            return expected;
        }
    }

    /**
     * One kernel ready to launch on a device: its buffers filled with random non-zero values, its
     * arguments packed, its stream. Shared by {@code gradsync compare} and the JMH benchmarks.
     */
    public static final class OnDevice implements AutoCloseable {
        private final DeviceStream stream;
        private final List<DeviceBuffer> buffers;
        private final List<AutoCloseable> toClose;
        private final long trafficBytes;
        /** What was uploaded, and the reference results (pinned memory is slow to allocate: only staging is). */
        private Inputs inputs;
        private boolean checked;
        /** Set when this launch made its own inputs (not shared with other forms). */
        private HostMemory ownMemory;
        private HostBuffer staging;
        private Runnable launch;
        private KernelSpec spec;
        private List<Arg> args;

        private OnDevice(DeviceStream stream, List<DeviceBuffer> buffers, List<AutoCloseable> toClose, long trafficBytes) {
            this.stream = stream;
            this.buffers = buffers;
            this.toClose = toClose;
            this.trafficBytes = trafficBytes;
        }

        /**
         * Launches once and compares every array with the Java method run on the same inputs:
         * elements that differ (bit for bit; within 1e-4 relative for the one-element results of
         * atomic reductions, whose addition order is the hardware's). Call before any other launch.
         */
        public long countWrong() {
            if (checked) {
                throw new IllegalStateException("countWrong runs once, before any other launch");
            }
            checked = true;
            launch();
            stream.synchronize();
            MemorySegment[] expected = inputs.expected();
            long wrong = 0;
            int b = 0;
            try (Arena arena = Arena.ofConfined()) {
                for (int i = 0; i < args.size(); i++) {
                    Arg a = args.get(i);
                    if (a.element() == null) {
                        continue;
                    }
                    MemorySegment actual = arena.allocate(Math.max(8, a.bytes()), 64);
                    download(buffers.get(b++), actual, a.bytes());
                    wrong += differences(a, expected[i], actual, spec.style() == KernelStyle.CONTEXT && !a.fullLength());
                }
            }
            return wrong;
        }

        /** Host memory to a device buffer through the one pinned staging buffer, chunk by chunk. */
        private void upload(MemorySegment from, DeviceBuffer to, long bytes) {
            for (long at = 0; at < bytes; at += staging.byteSize()) {
                long len = Math.min(staging.byteSize(), bytes - at);
                staging.segment().copyFrom(from.asSlice(at, len));
                stream.copyFromHost(staging, 0, to, at, len);
                stream.synchronize();
            }
        }

        private void download(DeviceBuffer from, MemorySegment to, long bytes) {
            for (long at = 0; at < bytes; at += staging.byteSize()) {
                long len = Math.min(staging.byteSize(), bytes - at);
                stream.copyToHost(from, at, staging, 0, len);
                stream.synchronize();
                to.asSlice(at, len).copyFrom(staging.segment().asSlice(0, len));
            }
        }

        /**
         * @param grid thread blocks for the element-wise kernels (grid-stride loops, so any grid is
         *             correct), 0 for one thread per element; reductions keep their own bounded launch
         * @param nvcc the reference build, needed for {@link Variant#NVCC} only
         */
        public static OnDevice prepare(Variant variant, KernelSpec spec, Device device, long bytes, int grid, NvccReference nvcc) {
            HostMemory own = new HostMemory();
            try {
                OnDevice k = prepare(variant, device, own.inputs(spec, bytes), grid, nvcc);
                k.ownMemory = own;
                return k;
            } catch (RuntimeException e) {
                own.close();
                throw e;
            }
        }

        /** As above, on inputs shared with the kernel's other forms ({@link HostMemory#inputs}). */
        public static OnDevice prepare(Variant variant, Device device, Inputs inputs, int grid, NvccReference nvcc) {
            if (variant == Variant.JVM) {
                throw new IllegalArgumentException("the JVM variant runs on the host: use onJvm");
            }
            KernelSpec spec = inputs.spec;
            int n = inputs.n;
            List<Arg> args = inputs.args;
            OnDevice k = new OnDevice(device.createStream(), new ArrayList<>(), new ArrayList<>(), traffic(spec, args));
            k.spec = spec;
            k.args = args;
            k.inputs = inputs;
            try {
                long largest = args.stream().mapToLong(a -> a.element() == null ? 0 : a.bytes()).max().orElse(0);
                k.staging = device.allocateHost(Math.max(8, Math.min(STAGING_BYTES, largest)));
                k.toClose.add(k.staging);
                Object[] kernelArgs = new Object[args.size()];
                for (int i = 0; i < args.size(); i++) {
                    Arg a = args.get(i);
                    if (a.element() == null) {
                        kernelArgs[i] = a.scalar();
                        continue;
                    }
                    DeviceBuffer b = device.allocate(a.bytes());
                    k.buffers.add(b);
                    k.upload(inputs.values[i], b, a.bytes());
                    kernelArgs[i] = new DeviceSlice(b, 0, a.count());
                }
                DeviceStream stream = k.stream;
                LaunchShape shape = launchShape(spec, n, grid);
                k.launch = switch (variant) {
                    case PTX -> {
                        var prepared = CudaKernels.prepare((CudaDevice) device, spec.compile(), shape, kernelArgs);
                        yield () -> prepared.launch((CudaStream) stream);
                    }
                    case NVCC -> {
                        var prepared = CudaKernels.prepareReference(nvcc.function((CudaDevice) device, spec.name()), spec.compile(),
                                new LaunchShape(shape.grid(), shape.block()), kernelArgs);
                        yield () -> prepared.launch((CudaStream) stream);
                    }
                    case OPENCL -> {
                        var prepared = OpenClKernels.prepare((OpenClQueue) stream, spec.compile(), shape, kernelArgs);
                        k.toClose.add(prepared);
                        yield () -> prepared.launch((OpenClQueue) stream);
                    }
                    case JVM -> throw new AssertionError("checked above");
                };
                return k;
            } catch (RuntimeException e) {
                k.close();
                throw e;
            }
        }

        /** Enqueues one launch (asynchronous; synchronize the stream to wait). */
        public void launch() {
            launch.run();
        }

        public DeviceStream stream() {
            return stream;
        }

        /** Bytes a perfect kernel moves per launch. */
        public long trafficBytes() {
            return trafficBytes;
        }

        @Override
        public void close() {
            for (AutoCloseable c : toClose) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // releasing a kernel object cannot change a measurement already taken
                }
            }
            stream.close();
            buffers.forEach(DeviceBuffer::close);
            if (ownMemory != null) {
                ownMemory.close();
            }
        }
    }

    // ---------------------------------------------------------------- JVM variant

    /**
     * The Java method itself. Element-wise kernels are split into one slice per core (what a
     * device's threads do); KernelContext kernels run over their launch shape, spread by JvmKernels.
     */
    public static Cell onJvm(KernelSpec spec, long bytes, Repeats r) {
        try (OnJvm k = OnJvm.prepare(spec, bytes)) {
            double micros = timeOnHost(k::launch, r);
            return new Cell(micros, k.trafficBytes() / (micros * 1e3), -1, null); // it is the reference
        }
    }

    /** A kernel's JVM figure, and that of the reference kernel timed in alternation with it. */
    public record Beside(Cell cell, double referenceGbPerSecond) {
        /** The kernel's GB/s as a fraction of the reference's. */
        public double ratio() {
            return cell.gbPerSecond() / referenceGbPerSecond;
        }
    }

    /**
     * As {@link #onJvm}, with {@code reference} (prepared and warmed) timed call for call between
     * the kernel's timed calls: on a shared host whose speed drifts over a table, the two medians
     * then come from the same stretch of time, and their ratio compares the kernels alone.
     */
    public static Beside onJvmBeside(KernelSpec spec, OnJvm reference, long bytes, Repeats r) {
        try (OnJvm k = OnJvm.prepare(spec, bytes)) {
            warmUp(k::launch, r);
            reference.launch(); // its lines back in the caches, as the kernel's are
            double[] mine = new double[r.timed()];
            double[] theirs = new double[r.timed()];
            for (int i = 0; i < r.timed(); i++) {
                mine[i] = microsOf(k::launch);
                theirs[i] = microsOf(reference::launch);
            }
            double micros = median(mine);
            double referenceMicros = median(theirs);
            return new Beside(new Cell(micros, k.trafficBytes() / (micros * 1e3), -1, null),
                    reference.trafficBytes() / (referenceMicros * 1e3));
        }
    }

    /** One kernel ready to run as Java: off-heap arrays with random non-zero values, split per core. */
    public static final class OnJvm implements AutoCloseable {
        private final Arena arena;
        private final long trafficBytes;
        private Runnable launch;

        private OnJvm(Arena arena, long trafficBytes) {
            this.arena = arena;
            this.trafficBytes = trafficBytes;
        }

        /** {@code spec} prepared and warmed up as {@link #onJvm} warms it, for {@link #onJvmBeside}. */
        public static OnJvm warmed(KernelSpec spec, long bytes, Repeats r) {
            OnJvm k = prepare(spec, bytes);
            warmUp(k::launch, r);
            return k;
        }

        public static OnJvm prepare(KernelSpec spec, long bytes) {
            int n = elementsFor(spec, bytes);
            List<Arg> args = arguments(spec, n);
            OnJvm k = new OnJvm(Arena.ofShared(), traffic(spec, args));
            MemorySegment[] segments = new MemorySegment[args.size()];
            long seed = System.nanoTime();
            for (int i = 0; i < args.size(); i++) {
                Arg a = args.get(i);
                if (a.element() != null) {
                    segments[i] = k.arena.allocate(Math.max(8, a.bytes()), 64);
                    fill(a, segments[i], seed + i);
                }
            }
            if (spec.style() == KernelStyle.CONTEXT) {
                Object[] whole = wrapAll(args, segments, 0, n);
                LaunchShape shape = spec.launchShape(n);
                k.launch = () -> JvmKernels.run(spec, shape.globalSize(), shape.block(), whole);
            } else {
                int parts = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), n / 4096));
                Object[][] slices = new Object[parts][];
                for (int p = 0; p < parts; p++) {
                    int from = (int) ((long) n * p / parts);
                    int to = (int) ((long) n * (p + 1) / parts);
                    slices[p] = wrapAll(args, segments, from, to - from);
                }
                k.launch = () -> IntStream.range(0, parts).parallel().forEach(p -> JvmKernels.run(spec, 1, 1, slices[p]));
            }
            return k;
        }

        /** Runs the kernel once, to completion. */
        public void launch() {
            launch.run();
        }

        public long trafficBytes() {
            return trafficBytes;
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    /** JVM copy bandwidth (read + write): one parallel copy of {@code bytes}, as the kernels are parallel. */
    public static double jvmCopyBandwidth(long bytes, Repeats r) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment a = arena.allocate(bytes, 64);
            MemorySegment b = arena.allocate(bytes, 64);
            a.fill((byte) 1);
            int parts = Math.max(1, Runtime.getRuntime().availableProcessors());
            double micros = timeOnHost(() -> IntStream.range(0, parts).parallel().forEach(p -> {
                long from = bytes * p / parts;
                long to = bytes * (p + 1) / parts;
                MemorySegment.copy(a, from, b, from, to - from);
            }), r);
            return 2.0 * bytes / (micros * 1e3);
        }
    }

    private static Object[] wrapAll(List<Arg> args, MemorySegment[] segments, int from, int count) {
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

    private static double timeOnHost(Runnable work, Repeats r) {
        warmUp(work, r);
        double[] micros = new double[r.timed()];
        for (int i = 0; i < r.timed(); i++) {
            micros[i] = microsOf(work);
        }
        return median(micros);
    }

    /**
     * By time as well as by count, as bench warms up, and until steady: a few calls of a long loop
     * can leave a Java kernel in on-stack-replaced or not yet recompiled code.
     */
    private static void warmUp(Runnable work, Repeats r) {
        Warmup.untilSteady(r.warmup(), 5, work);
    }

    private static double microsOf(Runnable work) {
        long t0 = System.nanoTime();
        work.run();
        return (System.nanoTime() - t0) / 1e3;
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
        if (spec.style() == KernelStyle.CONTEXT) {
            LaunchShape shape = spec.launchShape(n);
            JvmKernels.run(spec, shape.globalSize(), shape.block(), wrapAll(args, segments, 0, n));
            return;
        }
        // element-wise: slices per core give the same result as one pass, sooner
        int parts = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), n / 4096));
        IntStream.range(0, parts).parallel().forEach(p -> {
            int from = (int) ((long) n * p / parts);
            int to = (int) ((long) n * (p + 1) / parts);
            JvmKernels.run(spec, 1, 1, wrapAll(args, segments, from, to - from));
        });
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
            } else if (MemorySegment.mismatch(expected, at, at + size, actual, at, at + size) >= 0) {
                wrong++;
            }
        }
        return wrong;
    }

    // ---------------------------------------------------------------- data

    /**
     * Full-length arrays get random non-zero values of magnitude 0.5..1.5, either sign, stored in
     * the array's own format; one-element results and flags start at zero (the kernels add to them).
     */
    static void fill(Arg a, MemorySegment s, long seed) {
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
                float v = (float) ((0.5 + rnd.nextDouble()) * (rnd.nextBoolean() ? 1 : -1));
                long at = (long) i * a.element().bytes();
                switch (a.element()) {
                    case F32 -> s.set(ValueLayout.JAVA_FLOAT_UNALIGNED, at, v);
                    case F64 -> s.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, at, v);
                    case I32 -> s.set(ValueLayout.JAVA_INT_UNALIGNED, at, 1 + rnd.nextInt(1000));
                    case I64 -> s.set(ValueLayout.JAVA_LONG_UNALIGNED, at, 1 + rnd.nextInt(1000));
                    // bf16 is the top half of the fp32 bits; truncating keeps it non-zero
                    case BF16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, (short) (Float.floatToRawIntBits(v) >>> 16));
                    case F16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, Float.floatToFloat16(v));
                }
            }
        });
    }

    static double median(double[] values) {
        return Timing.of(values).medianMicros();
    }

    /** The built-in kernels named in {@code list} (comma separated), or all of them for null/"all". */
    public static List<KernelSpec> select(String list) {
        if (list == null || list.isBlank() || list.trim().equalsIgnoreCase("all")) {
            return BuiltinKernels.all();
        }
        List<KernelSpec> specs = new ArrayList<>();
        for (String name : list.split(",")) {
            if (name.isBlank()) {
                continue;
            }
            specs.add(BuiltinKernels.byName(name.trim()).orElseThrow(() -> new IllegalArgumentException("unknown kernel '"
                    + name.trim() + "'; see gradsync kernels for the list")));
        }
        if (specs.isEmpty()) {
            throw new IllegalArgumentException("no kernel named in '" + list + "'");
        }
        return specs;
    }
}
