package io.gradsync.tasks.testing;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.kernels.DeviceSlice;

import java.util.ArrayList;
import java.util.List;

/**
 * Test helper: runs a compiled kernel on GPU 0 through the CUDA runtime ({@link CudaKernels}:
 * PTX for the GPU's compute capability, cuModuleLoadData, cached), arrays staged through pinned
 * host memory and copied back. Arrays sit at 256-byte aligned offsets of one pool, so
 * element-wise kernels take their vector form; {@link #shifted} moves arrays off that alignment.
 */
public final class CudaRunner implements DeviceRunner {
    private final CudaDevice device;
    private HostBuffer staging;
    private CudaBuffer pool;
    private volatile CudaKernels.PreparedLaunch lastLaunch;

    private CudaRunner(CudaDevice device) {
        this.device = device;
    }

    /** A new runner on GPU 0 (its own staging memory), or null when the CUDA runtime has no device here. */
    public static CudaRunner firstOrNull() {
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

    /** The launch {@link #run} made last (which form, which shape), or null before the first. */
    public CudaKernels.PreparedLaunch lastLaunch() {
        return lastLaunch;
    }

    /**
     * This runner with array number {@code array} (among the kernel's array parameters; -1 for
     * all of them) placed one element past its aligned offset: a slice whose start no vector
     * access fits.
     */
    public DeviceRunner shifted(int array) {
        return new DeviceRunner() {
            @Override
            public String name() {
                return CudaRunner.this.name() + (array < 0 ? " all arrays" : " array " + array) + " shifted by one element";
            }

            @Override
            public void run(CompiledKernel kernel, Object[] args, LaunchShape shape) {
                CudaRunner.this.run(kernel, args, shape, array);
            }
        };
    }

    @Override
    public void run(CompiledKernel kernel, Object[] args, LaunchShape shape) {
        run(kernel, args, shape, Integer.MIN_VALUE);
    }

    /** As {@link #run(CompiledKernel, Object[], LaunchShape)}, array {@code shifted} (-1: all) one element off. */
    private synchronized void run(CompiledKernel kernel, Object[] args, LaunchShape shape, int shifted) {
        List<KernelArray> arrays = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        long total = 0;
        for (KernelParam p : KernelIrs.parameters(kernel)) {
            if (p instanceof KernelParam.ArrayParam ap) {
                KernelArray array = (KernelArray) args[p.javaIndex()];
                long shift = shifted == -1 || shifted == arrays.size() ? ap.element().bytes() : 0;
                arrays.add(array);
                offsets.add(total + shift);
                total += align(Math.max(4, array.segment().byteSize()) + shift);
            }
        }
        reserve(total);
        try (CudaStream stream = device.createStream()) {
            List<Object> deviceArgs = new ArrayList<>();
            int a = 0;
            for (KernelParam p : KernelIrs.parameters(kernel)) {
                switch (p) {
                    case KernelParam.ArrayParam ap -> {
                        KernelArray array = arrays.get(a);
                        long at = offsets.get(a++);
                        staging.segment().asSlice(at, array.segment().byteSize()).copyFrom(array.segment());
                        deviceArgs.add(new DeviceSlice(pool, at, array.getSize()));
                    }
                    case KernelParam.ScalarParam s -> deviceArgs.add(args[p.javaIndex()]);
                    case KernelParam.ContextParam c -> {
                    }
                }
            }
            stream.copyFromHost(staging, 0, pool, 0, total);
            CudaKernels.PreparedLaunch launch = CudaKernels.prepare(device, kernel, shape, deviceArgs.toArray());
            lastLaunch = launch;
            launch.launch(stream);
            stream.copyToHost(pool, 0, staging, 0, total);
            stream.synchronize();
            for (int i = 0; i < arrays.size(); i++) {
                KernelArray array = arrays.get(i);
                array.segment().copyFrom(staging.segment().asSlice(offsets.get(i), array.segment().byteSize()));
            }
        }
    }

    /**
     * One pinned staging buffer and one device buffer, grown as cases get larger and kept: pinning
     * hundreds of MiB per case made the suite take minutes. Arrays sit at 256-byte aligned offsets.
     */
    private void reserve(long bytes) {
        if (staging != null && staging.byteSize() >= bytes) {
            return;
        }
        long size = Math.max(bytes, 64L << 20);
        if (staging != null) {
            staging.close();
            pool.close();
            staging = null;
            pool = null;
        }
        staging = device.allocateHost(size);
        pool = device.allocate(size);
    }

    private static long align(long bytes) {
        return (bytes + 255) & ~255L;
    }
}
