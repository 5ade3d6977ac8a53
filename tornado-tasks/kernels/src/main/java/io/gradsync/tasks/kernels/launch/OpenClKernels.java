package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.device.DeviceException;
import io.gradsync.tasks.opencl.driver.OpenClHandles;
import io.gradsync.tasks.opencl.OpenClBuffer;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClQueue;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_kernel;
import org.jocl.cl_program;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.jocl.CL.*;

/**
 * Compiled kernels built for OpenCL devices: one program per (device, kernel), built once from
 * the generated OpenCL C and kept for the process.
 *
 * <p>Programs are built through {@link OpenClHandles#buildProgram} with the compiler's options for the device.
 * An element-wise kernel whose arrays are all aligned runs in its vector form
 * ({@link CompiledKernel#openCl(boolean)}, {@link VectorLaunches#width}), as on CUDA. Hot paths {@link #prepare prepare} a launch once (its own {@code cl_kernel} with the
 * arguments set) and {@link PreparedLaunch#launch launch} it every step.
 *
 * <p>A user's kernel (not one of a {@link io.gradsync.tasks.kernels.KernelFamily}) runs with every
 * access checked against its array's length ({@link CompiledKernel#openClChecked()}), or in its
 * vector form where its loop is bounded by an array every access lies in; a launch's first access
 * out of bounds is then reported by {@link PreparedLaunch#checkBounds} after it ran.
 */
public final class OpenClKernels {
    /**
     * System property: {@code false} runs users' kernels unchecked, as the built-ins run (for
     * comparisons, or kernels whose indices are known good: an index out of bounds then writes over
     * whatever lies beyond the array, on a CPU device the JVM's own memory); default {@code true}.
     */
    public static final String BOUNDS_CHECK_PROPERTY = "gradsync.openClBoundsChecks";

    /** The programs a kernel has: its scalar and vector forms, and the scalar form with every access checked. */
    private enum Form { SCALAR, VECTOR, CHECKED }

    private record Key(OpenClDevice device, CompiledKernel kernel, Form form) {
    }

    private record Built(cl_program program, OpenClDevice device) {
    }

    private static final Map<Key, Built> PROGRAMS = new ConcurrentHashMap<>();

    private OpenClKernels() {
    }

    /** Builds (once) the kernel's program in {@code form} for the device of {@code queue}. */
    private static cl_program program(OpenClQueue queue, CompiledKernel kernel, Form form) {
        OpenClDevice device = queue.device();
        return PROGRAMS.computeIfAbsent(new Key(device, kernel, form),
                k -> new Built(OpenClHandles.buildProgram(device, form == Form.CHECKED ? kernel.openClChecked() : kernel.openCl(form == Form.VECTOR),
                        CompiledKernel.openClBuildOptions(device.correctlyRoundedDivideSqrt(), device.isNvidiaGpu(), device.hasPtxBf16()), kernel.entryName()), device))
                .program();
    }

    /**
     * Whether a launch tests every access against its array's length ({@link CompiledKernel#openClChecked()}):
     * a user's kernel, whose indices nothing vouches for. An index out of bounds would otherwise
     * write over whatever memory lies beyond (on a CPU device, the JVM's own). The built-ins'
     * accesses lie in their arrays by construction.
     */
    private static boolean checked(CompiledKernel kernel) {
        return io.gradsync.tasks.kernels.KernelFamily.of(kernel.owner()).isEmpty()
                && Boolean.parseBoolean(System.getProperty(BOUNDS_CHECK_PROPERTY, "true"));
    }

    /**
     * Packs arguments for {@code spec}: one per Java parameter, in order, a {@link DeviceSlice} of
     * an {@link OpenClBuffer} of {@code queue}'s device per array, a {@link Number} per scalar,
     * nothing for the KernelContext. The launch shape follows {@link KernelSpec#launchShape}.
     */
    public static PreparedLaunch prepare(OpenClQueue queue, KernelSpec spec, long workItems, Object... args) {
        return prepare(queue, spec.compile(), spec.launchShape(workItems), args);
    }

    /** As {@link #prepare(OpenClQueue, KernelSpec, long, Object...)} for any compiled kernel and shape. */
    public static PreparedLaunch prepare(OpenClQueue queue, CompiledKernel kernel, LaunchShape shape, Object... args) {
        OpenClDevice device = queue.device();
        long expected = KernelIrs.parameters(kernel).stream().filter(p -> !(p instanceof KernelParam.ContextParam)).count();
        if (args.length != expected) {
            throw new IllegalArgumentException(kernel.entryName() + " takes " + expected + " arguments (KernelContext excluded), got " + args.length);
        }
        boolean checked = checked(kernel);
        int width = vectorWidth(kernel, args, checked);
        Form form = width > 1 ? Form.VECTOR : checked ? Form.CHECKED : Form.SCALAR;
        int[] rc = {0};
        cl_kernel k = clCreateKernel(program(queue, kernel, form), kernel.openClKernelName(), rc);
        check(rc[0], "clCreateKernel(" + kernel.entryName() + ")", device);
        int a = 0;
        int slot = 0;
        int[] lengths = new int[KernelIrs.ir(kernel).arrayParams().size()];
        int arrayIndex = 0;
        for (KernelParam p : KernelIrs.parameters(kernel)) {
            switch (p) {
                case KernelParam.ArrayParam array -> {
                    Object arg = args[a++];
                    if (!(arg instanceof DeviceSlice slice) || !(slice.buffer() instanceof OpenClBuffer buffer) || buffer.device() != device) {
                        clReleaseKernel(k);
                        throw new IllegalArgumentException(kernel.entryName() + ": argument " + p.name() + " must be a DeviceSlice of an OpenClBuffer on "
                                + device.id() + ", got " + arg);
                    }
                    slice.check(array.element().bytes(), kernel.entryName() + "(" + p.name() + ")");
                    int offset = Math.toIntExact(slice.byteOffset() / array.element().bytes());
                    set(k, slot++, Sizeof.cl_mem, Pointer.to(OpenClHandles.memory(buffer)), device);
                    set(k, slot++, Sizeof.cl_int, Pointer.to(new int[]{offset}), device);
                    set(k, slot++, Sizeof.cl_int, Pointer.to(new int[]{slice.count()}), device);
                    lengths[arrayIndex++] = slice.count();
                }
                case KernelParam.ScalarParam s -> {
                    Number n;
                    try {
                        n = ScalarArgument.of(kernel, p, args[a++]);
                    } catch (IllegalArgumentException e) {
                        clReleaseKernel(k);
                        throw e;
                    }
                    switch (s.type()) {
                        case I32 -> set(k, slot++, Sizeof.cl_int, Pointer.to(new int[]{n.intValue()}), device);
                        case I64 -> set(k, slot++, Sizeof.cl_long, Pointer.to(new long[]{n.longValue()}), device);
                        case F32 -> set(k, slot++, Sizeof.cl_float, Pointer.to(new float[]{n.floatValue()}), device);
                        case F64 -> set(k, slot++, Sizeof.cl_double, Pointer.to(new double[]{n.doubleValue()}), device);
                    }
                }
                case KernelParam.ContextParam c -> {
                }
            }
        }
        if (KernelIrs.ir(kernel).params().stream().anyMatch(q -> q instanceof KernelParam.ContextParam)) {
            try {
                LaunchChecks.context(kernel, shape);
            } catch (IllegalArgumentException e) {
                clReleaseKernel(k);
                throw e;
            }
            set(k, slot++, Sizeof.cl_int, Pointer.to(new int[]{shape.globalX()}), device);
            set(k, slot++, Sizeof.cl_int, Pointer.to(new int[]{shape.globalY()}), device);
            set(k, slot++, Sizeof.cl_int, Pointer.to(new int[]{shape.globalZ()}), device);
        }
        BoundsRecord faults = null;
        if (form == Form.CHECKED) {
            try {
                faults = new BoundsRecord(device, queue, kernel, lengths);
                set(k, slot++, Sizeof.cl_mem, Pointer.to(OpenClHandles.memory((OpenClBuffer) faults.buffer())), device);
            } catch (RuntimeException e) {
                if (faults != null) {
                    faults.close();
                }
                clReleaseKernel(k);
                throw e;
            }
        }
        long elements = 0;
        for (Object arg : args) {
            if (arg instanceof DeviceSlice slice) {
                elements = Math.max(elements, slice.count());
            }
        }
        return new PreparedLaunch(kernel.entryName(), device, k, VectorLaunches.shape(shape, elements, width), width, faults);
    }

    /**
     * The vector form's width for these arguments ({@link VectorLaunches#width}, from each slice's
     * byte offset: a buffer's base is aligned to at least 128 bytes, as OpenCL requires), or 1.
     * Arguments not yet checked give 1: the checks below then fail them as for the scalar form.
     */
    private static int vectorWidth(CompiledKernel kernel, Object[] args, boolean checked) {
        if (kernel.openClVectorWidth() == 1 || !Boolean.parseBoolean(System.getProperty(CudaKernels.VECTOR_PROPERTY, "true"))) {
            return 1;
        }
        List<KernelParam.ArrayParam> arrays = KernelIrs.ir(kernel).arrayParams();
        long[] starts = new long[arrays.size()];
        int[] counts = new int[arrays.size()];
        Object[] memories = new Object[arrays.size()]; // OpenCL makes no sub-buffers here: one buffer, one memory
        int a = 0;
        int i = 0;
        for (KernelParam p : KernelIrs.parameters(kernel)) {
            if (p instanceof KernelParam.ContextParam) {
                continue;
            }
            Object arg = a < args.length ? args[a] : null;
            a++;
            if (p instanceof KernelParam.ArrayParam) {
                if (!(arg instanceof DeviceSlice slice)) {
                    return 1;
                }
                starts[i] = slice.byteOffset();
                memories[i] = slice.buffer();
                counts[i++] = slice.count();
            }
        }
        if (checked && !VectorLaunches.staysWithinArrays(kernel, args, counts)) {
            return 1; // the vector form checks no index
        }
        return VectorLaunches.width(kernel, starts, counts, memories);
    }

    private static void set(cl_kernel k, int index, long size, Pointer value, OpenClDevice device) {
        check(clSetKernelArg(k, index, size, value), "clSetKernelArg(" + index + ")", device);
    }

    private static void check(int rc, String call, OpenClDevice device) {
        if (rc != CL_SUCCESS) {
            throw new DeviceException(call, device.id(), rc, CL.stringFor_errorCode(rc));
        }
    }

    /** A kernel with its arguments set once; launch it as often as needed, then close it. */
    public static final class PreparedLaunch implements AutoCloseable {
        private final String name;
        private final OpenClDevice device;
        private final cl_kernel kernel;
        private final LaunchShape shape;
        private final int vectorWidth;
        /** Where a checked launch records an access out of bounds; null for one that checks none. */
        private final BoundsRecord faults;
        private volatile boolean closed;

        PreparedLaunch(String name, OpenClDevice device, cl_kernel kernel, LaunchShape shape, int vectorWidth, BoundsRecord faults) {
            this.name = name;
            this.device = device;
            this.kernel = kernel;
            this.shape = shape;
            this.vectorWidth = vectorWidth;
            this.faults = faults;
        }

        /** Whether this launch tests its accesses ({@link #checkBounds} has something to read). */
        public boolean checksBounds() {
            return faults != null;
        }

        /**
         * Throws {@link IndexOutOfBoundsException} naming the array and index if a launch since the
         * last check accessed an array out of bounds (waits for {@code queue}, on which those
         * launches ran or after which they finished). The device skipped every such access, a load
         * reading 0, and ran on; the rest of what the kernel wrote is as Java would have left it
         * only up to that access. Nothing to do for a launch that checks none.
         */
        public void checkBounds(OpenClQueue queue) {
            if (faults == null || closed) {
                return;
            }
            String fault = faults.take(queue);
            if (fault != null) {
                throw new IndexOutOfBoundsException(name + " on " + device.id() + ": " + fault
                        + " (the device skipped that access and every other one out of bounds)");
            }
        }

        /** The shape launched: the one asked for, or fewer groups for the vector form. */
        public LaunchShape shape() {
            return shape;
        }

        /** Elements per work item and access: the kernel's OpenCL vector width, or 1 for the scalar form. */
        public int vectorWidth() {
            return vectorWidth;
        }

        /** Enqueues the kernel on {@code queue}, which must belong to the same device (asynchronous). */
        public void launch(OpenClQueue queue) {
            if (closed) {
                throw new IllegalStateException("launch of " + name + " is closed");
            }
            if (queue.device() != device) {
                throw new IllegalArgumentException(name + " prepared for " + device.id() + " launched on a queue of " + queue.device().id());
            }
            long[] global = {shape.globalSize(), (long) shape.gridY() * shape.blockY(), (long) shape.gridZ() * shape.blockZ()};
            long[] local = {shape.block(), shape.blockY(), shape.blockZ()};
            OpenClHandles.enqueue(queue, q -> check(clEnqueueNDRangeKernel(q, kernel, 3, null, global, local, 0, null, null),
                    "clEnqueueNDRangeKernel(" + name + ")", device));
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                try {
                    clReleaseKernel(kernel);
                } finally {
                    if (faults != null) {
                        faults.close();
                    }
                }
            }
        }
    }
}
