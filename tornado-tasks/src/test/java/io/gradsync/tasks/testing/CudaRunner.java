package io.gradsync.tasks.testing;

import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.CudaKernels;
import io.gradsync.tasks.kernels.DeviceSlice;

import java.util.ArrayList;
import java.util.List;

/**
 * Test helper: runs a compiled kernel on GPU 0 through the CUDA runtime ({@link CudaKernels}:
 * PTX for the GPU's compute capability, cuModuleLoadData, cached), arrays staged through pinned
 * host buffers and copied back.
 */
public final class CudaRunner implements DeviceRunner {
    private final CudaDevice device;

    private CudaRunner(CudaDevice device) {
        this.device = device;
    }

    /** A runner on GPU 0, or null when the CUDA runtime has no device here. */
    public static CudaRunner sharedOrNull() {
        try {
            if (!CudaRuntime.status().available() || CudaRuntime.devices().isEmpty()) {
                return null;
            }
            return new CudaRunner(CudaRuntime.devices().get(0));
        } catch (Throwable t) {
            return null;
        }
    }

    public CudaDevice device() {
        return device;
    }

    @Override
    public String name() {
        return device.id() + " sm_" + device.smVersion();
    }

    @Override
    public synchronized void run(CompiledKernel kernel, Object[] args, long globalSize, long localSize) {
        List<AutoCloseable> resources = new ArrayList<>();
        List<KernelArray> arrays = new ArrayList<>();
        List<HostBuffer> hosts = new ArrayList<>();
        List<CudaBuffer> buffers = new ArrayList<>();
        try (CudaStream stream = device.createStream()) {
            List<Object> deviceArgs = new ArrayList<>();
            for (KernelParam p : kernel.parameters()) {
                Object arg = args[p.javaIndex()];
                switch (p) {
                    case KernelParam.ArrayParam a -> {
                        KernelArray array = (KernelArray) arg;
                        long bytes = Math.max(4, array.segment().byteSize());
                        HostBuffer host = device.allocateHost(bytes);
                        resources.add(host);
                        CudaBuffer buffer = device.allocate(bytes);
                        resources.add(buffer);
                        host.segment().asSlice(0, array.segment().byteSize()).copyFrom(array.segment());
                        stream.copyFromHost(host, 0, buffer, 0, bytes);
                        deviceArgs.add(new DeviceSlice(buffer, 0, array.getSize()));
                        arrays.add(array);
                        hosts.add(host);
                        buffers.add(buffer);
                    }
                    case KernelParam.ScalarParam s -> deviceArgs.add(arg);
                    case KernelParam.ContextParam c -> {
                    }
                }
            }
            int grid = (int) ((globalSize + localSize - 1) / localSize);
            CudaKernels.prepare(device, kernel, new LaunchShape(grid, (int) localSize), deviceArgs.toArray()).launch(stream);
            for (int i = 0; i < arrays.size(); i++) {
                stream.copyToHost(buffers.get(i), 0, hosts.get(i), 0, hosts.get(i).byteSize());
            }
            stream.synchronize();
            for (int i = 0; i < arrays.size(); i++) {
                KernelArray array = arrays.get(i);
                array.segment().copyFrom(hosts.get(i).segment().asSlice(0, array.segment().byteSize()));
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
