package io.gradsync.tasks.cuda.driver;

import static io.gradsync.tasks.cuda.driver.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import io.gradsync.tasks.cuda.CudaDevice;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/** A loaded PTX module of one GPU. */
public final class CudaModule implements AutoCloseable {
    private final CudaDevice device;
    private final CUmodule module;
    private volatile boolean closed;

    private CudaModule(CudaDevice device, CUmodule module) {
        this.device = device;
        this.module = module;
    }

    /** Loads a compiled module image (a cubin or fatbin, e.g. from nvcc -cubin); no JIT involved. */
    public static CudaModule load(CudaDevice device, byte[] image) {
        CudaHandles.bind(device);
        CUmodule module = new CUmodule();
        check(cuModuleLoadData(module, image), "cuModuleLoadData(image)", device.id());
        return new CudaModule(device, module);
    }

    /** Loads PTX through the driver's JIT. */
    public static CudaModule load(CudaDevice device, String ptx) {
        CudaHandles.bind(device);
        CUmodule module = new CUmodule();
        check(cuModuleLoadData(module, ptx), "cuModuleLoadData", device.id());
        return new CudaModule(device, module);
    }

    public CudaDevice device() {
        return device;
    }

    /** The entry point {@code name}; an exception names the module's device if it is missing. */
    public CudaFunction function(String name) {
        if (closed) {
            throw new IllegalStateException("module on " + device.id() + " is closed");
        }
        CudaHandles.bind(device);
        CUfunction f = new CUfunction();
        check(cuModuleGetFunction(f, module, name), "cuModuleGetFunction(" + name + ")", device.id());
        return new CudaFunction(device, name, f);
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            CudaHandles.bind(device);
            check(cuModuleUnload(module), "cuModuleUnload", device.id());
        }
    }
}
