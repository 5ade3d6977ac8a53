package io.gradsync.sync.backend;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.jvm.JvmStream;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.kernels.internal.JvmKernels;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClQueue;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * A built-in kernel prepared once on device memory ({@link DeviceSlice} arguments) and launched on
 * a stream, whichever runtime the stream's device is: PTX on CUDA, OpenCL C on OpenCL (the kernel
 * object is tied to the queue it was prepared on), the Java method on JVM devices (queued on the
 * stream as its work). For backend parts that run kernels on the replicas' own streams.
 */
public final class StreamKernels {
    private StreamKernels() {
    }

    /** A launch ready to be queued any number of times; {@link #close()} frees what it holds. */
    public interface Launch extends AutoCloseable {
        void launch(DeviceStream stream);

        @Override
        default void close() {
        }
    }

    /** {@code spec} over {@code count} work items with {@code args}, on the device of {@code stream}. */
    public static Launch prepare(DeviceStream stream, KernelSpec spec, long count, Object... args) {
        if (stream instanceof CudaStream) {
            CudaKernels.PreparedLaunch launch = CudaKernels.prepare((CudaDevice) stream.device(), spec, count, args);
            return s -> launch.launch((CudaStream) s);
        }
        if (stream instanceof OpenClQueue queue) {
            OpenClKernels.PreparedLaunch launch = OpenClKernels.prepare(queue, spec, count, args);
            return new Launch() {
                @Override
                public void launch(DeviceStream s) {
                    launch.launch((OpenClQueue) s);
                }

                @Override
                public void close() {
                    launch.close();
                }
            };
        }
        if (stream instanceof JvmStream) {
            return onJvm(spec, count, args);
        }
        throw new UnsupportedOperationException("no kernel launches on " + stream.device().id());
    }

    /** On JVM devices, whichever stream it is launched on: the kernel's Java, queued on the stream. */
    public static Launch onJvm(KernelSpec spec, long count, Object... args) {
        Object[] arrays = onHost(spec, args);
        var shape = spec.launchShape(count);
        return s -> ((JvmStream) s).submit(spec.name(), () -> JvmKernels.run(spec, shape.globalSize(), shape.block(), arrays));
    }

    /** JVM devices: each slice as the array type the kernel takes, over the device's host memory. */
    private static Object[] onHost(KernelSpec spec, Object[] args) {
        List<Class<?>> types = Arrays.stream(spec.method().getParameterTypes()).filter(t -> t != KernelContext.class).toList();
        Object[] arrays = new Object[args.length];
        for (int a = 0; a < args.length; a++) {
            if (args[a] instanceof DeviceSlice slice) {
                Class<?> type = types.get(a);
                int bytes = type == FloatArray.class ? 4 : type == DoubleArray.class ? 8 : 2;
                MemorySegment m = ((JvmBuffer) slice.buffer()).segment().asSlice(slice.byteOffset(), (long) slice.count() * bytes);
                arrays[a] = type == FloatArray.class ? FloatArray.wrap(m) : type == DoubleArray.class ? DoubleArray.wrap(m)
                        : type == Bfloat16Array.class ? Bfloat16Array.wrap(m) : HalfArray.wrap(m);
            } else {
                arrays[a] = args[a];
            }
        }
        return arrays;
    }
}
