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
 * offset argument of the calling convention is exercised; aligned, so that element-wise kernels
 * take their vector form, and {@link #shifted} moves arrays off that alignment) and copied back.
 */
public final class OpenClRunner implements DeviceRunner {
    /** Arrays start this many bytes into their device buffers. */
    private static final long OFFSET = 64;

    private final OpenClDevice device;
    private volatile int lastVectorWidth;

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

    /** The vector width of the launch {@link #run} made last (1: the scalar form). */
    public int lastVectorWidth() {
        return lastVectorWidth;
    }

    /**
     * This runner with array number {@code array} (among the kernel's array parameters; -1 for all
     * of them) one element past its aligned offset: a slice no vector access fits.
     */
    public DeviceRunner shifted(int array) {
        return new DeviceRunner() {
            @Override
            public String name() {
                return OpenClRunner.this.name() + (array < 0 ? " all arrays" : " array " + array) + " shifted by one element";
            }

            @Override
            public void run(CompiledKernel kernel, Object[] args, LaunchShape shape) {
                OpenClRunner.this.run(kernel, args, shape, array);
            }
        };
    }

    @Override
    public void run(CompiledKernel kernel, Object[] args, LaunchShape shape) {
        run(kernel, args, shape, Integer.MIN_VALUE);
    }

    private synchronized void run(CompiledKernel kernel, Object[] args, LaunchShape shape, int shifted) {
        List<AutoCloseable> resources = new ArrayList<>();
        List<KernelArray> arrays = new ArrayList<>();
        List<HostBuffer> hosts = new ArrayList<>();
        List<OpenClBuffer> buffers = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        try (OpenClQueue queue = device.createStream()) {
            List<Object> deviceArgs = new ArrayList<>();
            for (KernelParam p : KernelIrs.parameters(kernel)) {
                Object arg = args[p.javaIndex()];
                switch (p) {
                    case KernelParam.ArrayParam a -> {
                        KernelArray array = (KernelArray) arg;
                        long bytes = array.segment().byteSize();
                        long at = OFFSET + (shifted == -1 || shifted == arrays.size() ? a.element().bytes() : 0);
                        HostBuffer host = device.allocateHost(bytes);
                        resources.add(host);
                        OpenClBuffer buffer = device.allocate(at + bytes);
                        resources.add(buffer);
                        host.segment().copyFrom(array.segment());
                        queue.fill32(buffer, 0, OFFSET, 0x7FC0_0000);
                        queue.copyFromHost(host, 0, buffer, at, bytes);
                        deviceArgs.add(new DeviceSlice(buffer, at, array.getSize()));
                        offsets.add(at);
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
                lastVectorWidth = launch.vectorWidth();
                launch.launch(queue);
                for (int i = 0; i < arrays.size(); i++) {
                    queue.copyToHost(buffers.get(i), offsets.get(i), hosts.get(i), 0, hosts.get(i).byteSize());
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
