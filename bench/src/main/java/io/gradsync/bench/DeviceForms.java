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
import io.gradsync.tasks.kernels.internal.JvmKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClQueue;
import static io.gradsync.bench.KernelCompare.*;

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
 * The device forms of {@link KernelCompare}: the generated PTX, the nvcc reference and the
 * generated OpenCL C, each launched on its device with inputs from pinned host memory and timed
 * with device events around each launch (the median of the timed launches after warm-up).
 */
public final class DeviceForms {
    private DeviceForms() {
    }

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
            int grid, Repeats r, NvccReference nvcc, boolean check, Values values, Map<Long, HostMemory> memory) {
        Map<Variant, Cell> cells = new EnumMap<>(Variant.class);
        Map<Long, Inputs> inputs = new java.util.HashMap<>(); // one set per size, shared by the forms at that size
        Map<Variant, OnDevice> ready = new EnumMap<>(Variant.class);
        Map<Variant, Long> wrong = new EnumMap<>(Variant.class);
        List<DeviceEvent> events = new ArrayList<>();
        try {
            for (var e : devices.entrySet()) {
                try {
                    long size = bytes.get(e.getKey());
                    Inputs in = inputs.computeIfAbsent(size, b -> memory.computeIfAbsent(b, x -> new HostMemory()).inputs(spec, b, values));
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
         * Fresh random inputs of {@code kind} for {@code spec} with {@code bytes} in its first array, in this
         * memory; the previous inputs taken from it are invalid from here on.
         */
        public Inputs inputs(KernelSpec spec, long bytes, Values kind) {
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
                fill(a, values[i], seed + i, kind);
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
        /** After the checked launch: throws if it indexed an array out of bounds (OpenCL checks a user's kernel). */
        private Runnable boundsCheck = () -> { };
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
            boundsCheck.run();
            MemorySegment[] expected;
            try {
                expected = inputs.expected();
            } catch (RuntimeException e) { // not this form's failure: say whose
                throw new IllegalStateException("the reference, the kernel's Java method, threw " + e.getClass().getSimpleName()
                        + ": " + e.getMessage(), e);
            }
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
                OnDevice k = prepare(variant, device, own.inputs(spec, bytes, Values.UNIFORM), grid, nvcc);
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
                throw new IllegalArgumentException("the JVM variant runs on the host: use JvmForms.onJvmBeside");
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
                        k.toClose.add(prepared);
                        k.boundsCheck = () -> prepared.checkBounds((CudaStream) stream);
                        yield () -> prepared.launch((CudaStream) stream);
                    }
                    case NVCC -> {
                        var prepared = CudaKernels.prepareReference(nvcc.function((CudaDevice) device, spec), spec.compile(),
                                new LaunchShape(shape.grid(), shape.block()), kernelArgs);
                        yield () -> prepared.launch((CudaStream) stream);
                    }
                    case OPENCL -> {
                        var prepared = OpenClKernels.prepare((OpenClQueue) stream, spec.compile(), shape, kernelArgs);
                        k.toClose.add(prepared);
                        k.boundsCheck = () -> prepared.checkBounds((OpenClQueue) stream);
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

}
