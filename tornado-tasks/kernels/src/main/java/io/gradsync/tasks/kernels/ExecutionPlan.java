package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.kernels.internal.JvmKernels;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.ImmutableTaskGraph;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.jvm.JvmStream;
import io.gradsync.tasks.opencl.OpenClQueue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs an {@link ImmutableTaskGraph} on devices of any runtime (JVM, CUDA, OpenCL), reusing
 * compiled kernels, device buffers, staging buffers and prepared launches across executions.
 *
 * <p>Every task runs on the plan's device unless mapped to another with
 * {@link #withDevice(String, Device)}; tasks on different devices run at once (each device has
 * its own stream), tasks on one device in graph order. An array is allocated on each device
 * whose tasks use it; {@code transferToDevice} copies it to each of them, {@code transferToHost}
 * copies it back from the device of the last task that writes it. An array written on one device
 * and used on another within the same graph is rejected (split the graph instead): the plan never
 * moves data between devices behind the caller's back.
 *
 * <p>On the JVM runtime kernels are the Java methods themselves, run on the device's stream
 * thread, which shares element-wise kernels with gradsync's threads of the other cores ({@code JvmKernels}).
 *
 * <p>Thread-safety: {@link #execute()} and {@link #close()} may be called from any thread and are
 * serialized (one execution at a time). {@code withDevice}, {@code withGrid} and {@code bind} are not
 * synchronized: configure the plan on one thread before its first execution, then hand it over
 * safely (a final field, a concurrent queue). While an execution runs, the graph's arrays are the
 * plan's: other threads must not read or write them.
 */
public final class ExecutionPlan implements AutoCloseable {
    private final ImmutableTaskGraph graph;
    private final Map<String, Device> taskDevices = new HashMap<>();
    private final Map<String, io.gradsync.tasks.api.WorkerGrid> taskGrids = new HashMap<>();
    private final Map<String, TaskKernel> kernels = new HashMap<>();
    private final Map<Device, Map<KernelArray, DeviceSlice>> bound = new HashMap<>();
    private Device defaultDevice;
    private Map<Device, DeviceState> states;
    private List<Device[]> taskPlacement;
    private boolean executedOnce;
    private boolean closed;

    public ExecutionPlan(ImmutableTaskGraph graph) {
        this.graph = graph;
    }

    /** Runs every task not mapped elsewhere on {@code device}. */
    public ExecutionPlan withDevice(Device device) {
        checkNotStarted();
        this.defaultDevice = device;
        return this;
    }

    /** Runs task {@code taskName} on {@code device}. */
    public ExecutionPlan withDevice(String taskName, Device device) {
        checkNotStarted();
        if (graph.tasks().stream().noneMatch(t -> t.name().equals(taskName))) {
            throw new IllegalArgumentException("graph " + graph.name() + " has no task " + taskName);
        }
        taskDevices.put(taskName, device);
        return this;
    }

    /**
     * Launches task {@code taskName} over {@code grid}: required for a kernel written with a
     * {@code KernelContext} (its launch size cannot be derived from its arrays, and a guess would
     * leave elements untouched without a word), and for the other styles the number of threads of
     * its grid-stride loop. The built-in KernelContext kernels have launches of their own.
     */
    public ExecutionPlan withGrid(String taskName, io.gradsync.tasks.api.WorkerGrid grid) {
        checkNotStarted();
        java.util.Objects.requireNonNull(grid, "grid");
        if (graph.tasks().stream().noneMatch(t -> t.name().equals(taskName))) {
            throw new IllegalArgumentException("graph " + graph.name() + " has no task " + taskName);
        }
        taskGrids.put(taskName, grid);
        return this;
    }

    /**
     * Keeps {@code array} in caller-owned device memory on {@code device}: {@code slice} (as many
     * elements as the array has, at the slice's offset) instead of a buffer the plan allocates.
     * Several plans bound to the same slice share the data without copies (weights used by a
     * forward and an update plan; a gradient written straight into its bucket for the
     * synchronizer). The plan never frees bound memory, and does not zero it.
     */
    public ExecutionPlan bind(KernelArray array, Device device, DeviceSlice slice) {
        checkNotStarted();
        if (slice.buffer().device() != device) {
            throw new IllegalArgumentException("bound buffer is on " + slice.buffer().device().id() + ", not on " + device.id());
        }
        if (slice.count() != array.getSize()) {
            throw new IllegalArgumentException("bound slice has " + slice.count() + " elements, the array " + array.getSize());
        }
        slice.check(array.elementBytes(), "bound array");
        bound.computeIfAbsent(device, d -> new IdentityHashMap<>()).put(array, slice);
        return this;
    }

    private void checkNotStarted() {
        if (states != null) {
            throw new IllegalStateException("devices are fixed once the plan has run");
        }
    }

    /** One execution of the graph; blocks until every copy back to the host is done. */
    public synchronized ExecutionPlan execute() {
        if (closed) {
            throw new IllegalStateException("plan is closed");
        }
        if (states == null) {
            prepare();
        }
        for (DeviceState s : states.values()) {
            s.settle();
        }
        for (ImmutableTaskGraph.Step step : graph.steps()) {
            switch (step) {
                case ImmutableTaskGraph.CopyIn in -> {
                    if (in.mode() == DataTransferMode.EVERY_EXECUTION || !executedOnce) {
                        for (KernelArray array : in.arrays()) {
                            for (DeviceState s : states.values()) {
                                s.copyIn(array);
                            }
                        }
                    }
                }
                case ImmutableTaskGraph.Run run -> states.get(deviceOf(run.name())).launch(run.name());
                case ImmutableTaskGraph.CopyOut out -> {
                    if (out.mode() == DataTransferMode.EVERY_EXECUTION || !executedOnce) {
                        for (KernelArray array : out.arrays()) {
                            owner(array).copyOut(array);
                        }
                    }
                }
            }
        }
        for (DeviceState s : states.values()) {
            s.finish();
        }
        executedOnce = true;
        return this;
    }

    private Device deviceOf(String task) {
        Device d = taskDevices.getOrDefault(task, defaultDevice);
        if (d == null) {
            throw new IllegalStateException("task " + task + " of graph " + graph.name() + " has no device (withDevice)");
        }
        return d;
    }

    /** The device holding the final value of {@code array}: last writer, else first user. */
    private DeviceState owner(KernelArray array) {
        DeviceState writer = null;
        DeviceState user = null;
        for (ImmutableTaskGraph.Run run : graph.tasks()) {
            DeviceState s = states.get(deviceOf(run.name()));
            TaskKernel k = kernel(run);
            for (KernelParam p : k.params()) {
                if (p instanceof KernelParam.ArrayParam a && argFor(run, k, p) == array) {
                    user = user == null ? s : user;
                    if (k.writes(a.name())) {
                        writer = s;
                    }
                }
            }
        }
        if (writer != null) {
            return writer;
        }
        if (user == null) {
            throw new IllegalStateException("graph " + graph.name() + " copies back an array no task uses");
        }
        return user;
    }

    /** The argument of {@code run} for Java parameter {@code p} (KernelContext parameters take none). */
    private static Object argFor(ImmutableTaskGraph.Run run, TaskKernel k, KernelParam p) {
        int index = 0;
        for (KernelParam q : k.params()) {
            if (q == p) {
                return run.args().get(index);
            }
            if (!(q instanceof KernelParam.ContextParam)) {
                index++;
            }
        }
        throw new IllegalStateException();
    }

    private TaskKernel kernel(ImmutableTaskGraph.Run run) {
        return kernels.computeIfAbsent(run.name(), n -> TaskKernel.of(run.kernel()));
    }

    private void prepare() {
        states = new LinkedHashMap<>();
        Map<KernelArray, Device> writtenOn = new IdentityHashMap<>();
        Map<KernelArray, Device> usedOn = new IdentityHashMap<>();
        for (ImmutableTaskGraph.Run run : graph.tasks()) {
            Device d = deviceOf(run.name());
            TaskKernel k = kernel(run);
            for (KernelParam p : k.params()) {
                if (p instanceof KernelParam.ArrayParam a) {
                    KernelArray array = (KernelArray) argFor(run, k, p);
                    Device w = writtenOn.get(array);
                    if (w != null && w != d) {
                        throw new IllegalArgumentException("task " + run.name() + " on " + d.id() + " uses " + a.name()
                                + ", written on " + w.id() + " in the same graph; split the graph");
                    }
                    Device u = usedOn.putIfAbsent(array, d);
                    if (k.writes(a.name())) {
                        if (u != null && u != d) {
                            throw new IllegalArgumentException("task " + run.name() + " on " + d.id() + " writes " + a.name()
                                    + ", also used on " + u.id() + " in the same graph; split the graph");
                        }
                        writtenOn.put(array, d);
                    }
                }
            }
            states.computeIfAbsent(d, dev -> new DeviceState(dev, bound.getOrDefault(dev, Map.of()))).addTask(run, k, taskGrids.get(run.name()));
        }
    }

    /** Frees device and staging buffers and prepared launches; the arrays stay the caller's. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            if (states != null) {
                states.values().forEach(DeviceState::close);
            }
        }
    }

    // ------------------------------------------------------------------------------------------

    /** What the plan keeps on one device. */
    private static final class DeviceState {
        private final Device device;
        private final DeviceStream stream;
        private final Map<KernelArray, DeviceBuffer> buffers = new IdentityHashMap<>();
        private final Map<KernelArray, HostBuffer> staging = new IdentityHashMap<>();
        private final Map<String, Runnable> launches = new HashMap<>();
        private final List<AutoCloseable> closeables = new ArrayList<>();
        private final List<KernelArray> pendingOut = new ArrayList<>();
        /** Per task whose launches check their indices (a user's kernel on OpenCL): the check, after a run. */
        private final Map<String, Runnable> boundsChecks = new HashMap<>();
        /** Tasks with a bounds check launched since the last {@link #finish}, in order. */
        private final java.util.Set<String> launched = new java.util.LinkedHashSet<>();
        /** An interrupted finish left the stream running a run whose copies may still land in staging. */
        private boolean unsettled;
        private final Map<KernelArray, DeviceSlice> bound;

        DeviceState(Device device, Map<KernelArray, DeviceSlice> bound) {
            this.device = device;
            this.bound = bound;
            this.stream = device.createStream();
        }

        /** Byte offset of the array in {@link #buffer}: nonzero only for bound slices. */
        private long offset(KernelArray array) {
            DeviceSlice s = bound.get(array);
            return s == null ? 0 : s.byteOffset();
        }

        private DeviceBuffer buffer(KernelArray array) {
            DeviceSlice s = bound.get(array);
            if (s != null) {
                return s.buffer();
            }
            return buffers.computeIfAbsent(array, a -> {
                long bytes = Math.max(4, (a.segment().byteSize() + 3) & ~3L);
                DeviceBuffer b = device.allocate(bytes);
                stream.fill32(b, 0, bytes, 0); // a task may read an array nobody copied in: zeros, not garbage
                return b;
            });
        }

        /**
         * An element-wise loop (every access at its index {@code i}, from 0 up to its bound) reads or
         * writes each of its arrays up to the bound: the bound array's length
         * ({@code for (i < a.getSize())}), or a scalar argument ({@code for (i < n)}). A shorter array
         * would be read or written past its end on a device (on the JVM the loop would throw
         * halfway, after some stores). Refused before anything runs.
         */
        private static void refuseShortArrays(ImmutableTaskGraph.Run run, TaskKernel tk, Map<String, KernelArray> arrays, Object[] args) {
            if (tk.compiled() == null) {
                return;
            }
            var loop = KernelIrs.elementwiseLoop(tk.compiled());
            if (loop.isEmpty()) {
                return;
            }
            long bound;
            String what;
            if (loop.get().boundArray().isPresent()) {
                String boundName = loop.get().boundArray().get();
                if (!arrays.containsKey(boundName)) {
                    return;
                }
                bound = arrays.get(boundName).getSize();
                what = "the " + bound + " elements of " + boundName;
            } else {
                var scalar = io.gradsync.tasks.kernels.launch.LoopBounds.scalarBound(tk.compiled(), args);
                if (scalar.isEmpty()) {
                    return;
                }
                bound = scalar.get().value();
                what = "indices below " + scalar.get().parameter() + " = " + bound;
            }
            for (String name : loop.get().accessedArrays()) {
                KernelArray a = arrays.get(name);
                if (a != null && a.getSize() < bound) {
                    throw new IndexOutOfBoundsException("task " + run.name() + ": " + run.kernel().getName() + " loops over "
                            + what + " and accesses " + name + " at each, but " + name + " has " + a.getSize());
                }
            }
        }

        private HostBuffer staging(KernelArray array) {
            return staging.computeIfAbsent(array, a -> device.allocateHost(Math.max(4, a.segment().byteSize())));
        }

        void addTask(ImmutableTaskGraph.Run run, TaskKernel tk, io.gradsync.tasks.api.WorkerGrid grid) {
            if (tk.compiled() == null && !(stream instanceof JvmStream)) {
                throw tk.rejection(); // only the JVM runs a kernel as Java
            }
            List<Object> deviceArgs = new ArrayList<>();
            List<Object> jvmArgs = new ArrayList<>();
            Map<String, KernelArray> arrays = new HashMap<>();
            long workItems = -1;
            for (KernelParam p : tk.params()) {
                if (p instanceof KernelParam.ContextParam) {
                    continue;
                }
                Object arg = argFor(run, tk, p);
                if (arg instanceof KernelArray array) {
                    arrays.put(((KernelParam.ArrayParam) p).name(), array);
                    DeviceBuffer b = buffer(array);
                    deviceArgs.add(new DeviceSlice(b, offset(array), array.getSize()));
                    jvmArgs.add(b instanceof JvmBuffer jb ? view(array, jb, offset(array)) : null);
                    workItems = workItems < 0 ? array.getSize() : workItems;
                } else {
                    deviceArgs.add(arg);
                    jvmArgs.add(arg);
                }
            }
            refuseShortArrays(run, tk, arrays, deviceArgs.toArray());
            java.util.Optional<KernelSpec> builtin = BuiltinKernels.all().stream().filter(s -> s.method().equals(run.kernel())).findFirst();
            KernelSpec spec = builtin.orElse(new KernelSpec(run.kernel().getName(), run.kernel(), tk.style(), 0));
            LaunchShape shape;
            if (grid != null) {
                shape = LaunchShape.of(grid);
            } else if (spec.style() == io.gradsync.tasks.compiler.KernelStyle.CONTEXT && builtin.isEmpty()) {
                throw new IllegalArgumentException("task " + run.name() + ": " + run.kernel().getDeclaringClass().getSimpleName() + "."
                        + run.kernel().getName() + " takes a KernelContext, so its launch size cannot be derived from its arrays;"
                        + " give it a grid: plan.withGrid(\"" + run.name() + "\", WorkerGrid.of(threads))");
            } else {
                shape = spec.launchShape(Math.max(1, workItems));
            }
            CompiledKernel k = tk.compiled();
            Runnable launch = switch (stream) {
                case CudaStream cs -> {
                    CudaKernels.PreparedLaunch l = CudaKernels.prepare((CudaDevice) device, k, shape, deviceArgs.toArray());
                    closeables.add(l);
                    if (l.checksBounds()) {
                        checksBounds(run.name(), () -> l.checkBounds(cs));
                    }
                    yield () -> l.launch(cs);
                }
                case OpenClQueue q -> {
                    OpenClKernels.PreparedLaunch l = OpenClKernels.prepare(q, k, shape, deviceArgs.toArray());
                    closeables.add(l);
                    if (l.checksBounds()) {
                        checksBounds(run.name(), () -> l.checkBounds(q));
                    }
                    yield () -> l.launch(q);
                }
                case JvmStream js -> {
                    Object[] a = jvmArgs.toArray();
                    String what = "task '" + run.name() + "' (kernel " + run.kernel().getDeclaringClass().getSimpleName() + "."
                            + run.kernel().getName() + ")";
                    yield () -> js.submit(what, () -> JvmKernels.run(spec, shape, a));
                }
                default -> throw new IllegalArgumentException("no kernel launcher for " + device.id());
            };
            launches.put(run.name(), launch);
        }

        /** After a run of {@code task}: {@code check}, its message then naming the task. */
        private void checksBounds(String task, Runnable check) {
            boundsChecks.put(task, () -> {
                try {
                    check.run();
                } catch (IndexOutOfBoundsException e) {
                    throw new IndexOutOfBoundsException("task " + task + ": " + e.getMessage());
                }
            });
        }

        /** A view of the JVM device buffer as the array's own type. */
        private static KernelArray view(KernelArray array, JvmBuffer buffer, long offset) {
            var seg = buffer.segment().asSlice(offset, array.segment().byteSize());
            return switch (array) {
                case FloatArray f -> FloatArray.wrap(seg);
                case io.gradsync.tasks.api.DoubleArray d -> io.gradsync.tasks.api.DoubleArray.wrap(seg);
                case IntArray i -> IntArray.wrap(seg);
                case LongArray l -> LongArray.wrap(seg);
                case HalfArray h -> HalfArray.wrap(seg);
                case Bfloat16Array b -> Bfloat16Array.wrap(seg);
            };
        }

        /**
         * Before a run: an interrupted one left on the stream is waited for (its copies back would
         * land in the staging buffers this run fills); its failure, if any, is that run's and was
         * not reported to anyone who could act on it, so it is dropped here.
         */
        void settle() {
            if (!unsettled) {
                return;
            }
            try {
                stream.synchronize();
            } catch (RuntimeException e) {
                if (Thread.currentThread().isInterrupted()) {
                    throw e; // still unsettled: interrupted again
                }
            }
            unsettled = false;
        }

        void copyIn(KernelArray array) {
            DeviceBuffer b = bound.containsKey(array) ? bound.get(array).buffer() : buffers.get(array);
            if (b == null) {
                return; // no task on this device uses it
            }
            HostBuffer h = staging(array);
            long bytes = array.segment().byteSize();
            if (pendingOut.contains(array)) {
                finish(); // its staging buffer still holds a copy back of this run: deliver it first
            }
            h.segment().asSlice(0, bytes).copyFrom(array.segment());
            stream.copyFromHost(h, 0, b, offset(array), bytes);
        }

        void launch(String task) {
            launches.get(task).run();
            if (boundsChecks.containsKey(task)) {
                launched.add(task);
            }
        }

        void copyOut(KernelArray array) {
            long bytes = array.segment().byteSize();
            stream.copyToHost(buffer(array), offset(array), staging(array), 0, bytes);
            pendingOut.add(array);
        }

        /**
         * Waits for the stream and delivers the copies back; then throws for the first task run
         * since the last finish that accessed an array out of bounds (its results delivered as the
         * device left them, as Java leaves what a loop stored before it threw).
         */
        void finish() {
            try {
                stream.synchronize();
            } catch (RuntimeException e) {
                // the copies back are of a run that failed, or that an interrupt left running: never
                // delivered (the next execution's copy-in would have delivered them over the caller's data)
                pendingOut.clear();
                launched.clear();
                unsettled = Thread.currentThread().isInterrupted();
                throw e;
            }
            for (KernelArray array : pendingOut) {
                array.segment().copyFrom(staging.get(array).segment().asSlice(0, array.segment().byteSize()));
            }
            pendingOut.clear();
            if (launched.isEmpty()) {
                return;
            }
            RuntimeException first = null;
            try {
                for (String task : launched) {
                    try {
                        boundsChecks.get(task).run();
                    } catch (IndexOutOfBoundsException e) {
                        first = first == null ? e : first; // every record read and zeroed, the first reported
                    }
                }
            } finally {
                launched.clear();
            }
            if (first != null) {
                throw first;
            }
        }

        void close() {
            try {
                stream.synchronize();
            } finally {
                for (AutoCloseable c : closeables) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        throw new IllegalStateException("closing a launch on " + device.id(), e);
                    }
                }
                buffers.values().forEach(DeviceBuffer::close);
                staging.values().forEach(HostBuffer::close);
                stream.close();
            }
        }
    }
}
