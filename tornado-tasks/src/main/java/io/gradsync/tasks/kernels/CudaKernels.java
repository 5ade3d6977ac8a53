package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaFunction;
import io.gradsync.tasks.cuda.CudaModule;
import io.gradsync.tasks.cuda.CudaStream;
import jcuda.Pointer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiled kernels loaded on CUDA GPUs: one module per (GPU, kernel), PTX generated for the GPU's
 * own compute capability, loaded once with {@code cuModuleLoadData} and kept for the process.
 *
 * <p>Hot paths {@link #prepare prepare} a launch once (arguments packed in the calling
 * convention of {@link KernelParam}) and {@link PreparedLaunch#launch launch} it every step
 * without allocating.
 */
public final class CudaKernels {
    private record Key(CudaDevice device, CompiledKernel kernel) {
    }

    private static final Map<Key, CudaFunction> FUNCTIONS = new ConcurrentHashMap<>();
    private static final Map<Key, CudaModule> MODULES = new ConcurrentHashMap<>();

    private CudaKernels() {
    }

    /** The kernel's entry point on {@code device}, loading its module on first use. */
    public static CudaFunction function(CudaDevice device, CompiledKernel kernel) {
        return FUNCTIONS.computeIfAbsent(new Key(device, kernel), k -> {
            CudaModule module = device.loadModule(kernel.ptx(device.smVersion()));
            MODULES.put(k, module);
            return module.function(kernel.entryName());
        });
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
        int javaParams = kernel.parameters().size();
        int given = 0;
        for (KernelParam p : kernel.parameters()) {
            if (!(p instanceof KernelParam.ContextParam)) {
                given++;
            }
        }
        if (args.length != given) {
            throw new IllegalArgumentException(kernel.entryName() + " takes " + given + " arguments (KernelContext excluded), got " + args.length);
        }
        Pointer[] packed = new Pointer[kernel.deviceArgumentCount()];
        int a = 0;
        int slot = 0;
        for (int i = 0; i < javaParams; i++) {
            KernelParam p = kernel.parameters().get(i);
            switch (p) {
                case KernelParam.ArrayParam array -> {
                    Object arg = args[a++];
                    if (!(arg instanceof DeviceSlice slice) || !(slice.buffer() instanceof CudaBuffer buffer)) {
                        throw new IllegalArgumentException(kernel.entryName() + ": argument " + p.name() + " must be a DeviceSlice of a CudaBuffer, got " + arg);
                    }
                    slice.check(array.element().bytes(), kernel.entryName() + "(" + p.name() + ")");
                    // the .u64 pointer parameter as a plain 64-bit value: base address plus slice offset
                    packed[slot++] = Pointer.to(new long[]{buffer.address() + slice.byteOffset()});
                    packed[slot++] = Pointer.to(new int[]{slice.count()});
                }
                case KernelParam.ScalarParam s -> {
                    Object arg = args[a++];
                    if (!(arg instanceof Number n)) {
                        throw new IllegalArgumentException(kernel.entryName() + ": argument " + p.name() + " must be a number, got " + arg);
                    }
                    packed[slot++] = switch (s.type()) {
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
        return new PreparedLaunch(function(device, kernel), shape, Pointer.to(packed));
    }

    /** A kernel launch with its arguments packed once; launch it as often as needed. */
    public static final class PreparedLaunch {
        private final CudaFunction function;
        private final LaunchShape shape;
        private final Pointer parameters;

        PreparedLaunch(CudaFunction function, LaunchShape shape, Pointer parameters) {
            this.function = function;
            this.shape = shape;
            this.parameters = parameters;
        }

        public LaunchShape shape() {
            return shape;
        }

        /** Enqueues the kernel on {@code stream} (asynchronous). */
        public void launch(CudaStream stream) {
            function.launch(stream, shape.grid(), shape.block(), 0, parameters);
        }
    }
}
