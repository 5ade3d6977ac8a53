package io.gradsync.tasks.testing;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClBuffer;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClQueue;
import io.gradsync.tasks.opencl.OpenClRuntime;

import java.util.ArrayList;
import java.util.List;

/**
 * Test helper: runs a compiled kernel on the first OpenCL device (PoCL in CI) through the OpenCL
 * runtime and {@link OpenClKernels}, arrays placed at a non-zero offset in their buffers (so the
 * offset argument of the calling convention is exercised) and copied back.
 */
public final class OpenClRunner implements DeviceRunner {
    /** Arrays start this many bytes into their device buffers. */
    private static final long OFFSET = 64;

    private final OpenClDevice device;

    private OpenClRunner(OpenClDevice device) {
        this.device = device;
    }

    /** A runner on OpenCL device 0, or null when the OpenCL runtime has no device here. */
    public static OpenClRunner firstOrNull() {
        try {
            if (!OpenClRuntime.status().available() || OpenClRuntime.devices().isEmpty()) {
                return null;
            }
            return new OpenClRunner(OpenClRuntime.devices().get(0));
        } catch (Throwable t) {
            return null;
        }
    }

    /** A runner on the first OpenCL device that its platform calls a GPU, or null. */
    public static OpenClRunner gpuOrNull() {
        try {
            if (!OpenClRuntime.status().available()) {
                return null;
            }
            return OpenClRuntime.devices().stream().filter(OpenClDevice::isGpu).findFirst().map(OpenClRunner::new).orElse(null);
        } catch (Throwable t) {
            return null;
        }
    }

    @Override
    public String name() {
        return device.id();
    }

    @Override
    public synchronized void run(CompiledKernel kernel, Object[] args, LaunchShape shape) {
        List<AutoCloseable> resources = new ArrayList<>();
        List<KernelArray> arrays = new ArrayList<>();
        List<HostBuffer> hosts = new ArrayList<>();
        List<OpenClBuffer> buffers = new ArrayList<>();
        try (OpenClQueue queue = device.createStream()) {
            List<Object> deviceArgs = new ArrayList<>();
            for (KernelParam p : KernelIrs.parameters(kernel)) {
                Object arg = args[p.javaIndex()];
                switch (p) {
                    case KernelParam.ArrayParam a -> {
                        KernelArray array = (KernelArray) arg;
                        long bytes = array.segment().byteSize();
                        HostBuffer host = device.allocateHost(bytes);
                        resources.add(host);
                        OpenClBuffer buffer = device.allocate(OFFSET + bytes);
                        resources.add(buffer);
                        host.segment().copyFrom(array.segment());
                        queue.fill32(buffer, 0, OFFSET, 0x7FC0_0000);
                        queue.copyFromHost(host, 0, buffer, OFFSET, bytes);
                        deviceArgs.add(new DeviceSlice(buffer, OFFSET, array.getSize()));
                        arrays.add(array);
                        hosts.add(host);
                        buffers.add(buffer);
                    }
                    case KernelParam.ScalarParam s -> deviceArgs.add(arg);
                    case KernelParam.ContextParam c -> {
                    }
                }
            }
            try (OpenClKernels.PreparedLaunch launch = OpenClKernels.prepare(queue, kernel, shape, deviceArgs.toArray())) {
                launch.launch(queue);
                for (int i = 0; i < arrays.size(); i++) {
                    queue.copyToHost(buffers.get(i), OFFSET, hosts.get(i), 0, hosts.get(i).byteSize());
                }
                queue.synchronize();
            }
            for (int i = 0; i < arrays.size(); i++) {
                arrays.get(i).segment().copyFrom(hosts.get(i).segment());
            }
        } finally {
            for (AutoCloseable r : resources.reversed()) {
                try {
                    r.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + r, e);
                }
            }
        }
    }
}
