package io.gradsync.tasks.cuda;

import static io.gradsync.tasks.cuda.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/** A loaded PTX module of one GPU. */
public final class CudaModule implements AutoCloseable {
    private final CudaDevice device;
    private final CUmodule module;
    private volatile boolean closed;

    CudaModule(CudaDevice device, CUmodule module) {
        this.device = device;
        this.module = module;
    }

    public CudaDevice device() {
        return device;
    }

    /** The entry point {@code name}; an exception names the module's device if it is missing. */
    public CudaFunction function(String name) {
        if (closed) {
            throw new IllegalStateException("module on " + device.id() + " is closed");
        }
        device.bind();
        CUfunction f = new CUfunction();
        check(cuModuleGetFunction(f, module, name), "cuModuleGetFunction(" + name + ")", device.id());
        return new CudaFunction(device, name, f);
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            device.bind();
            check(cuModuleUnload(module), "cuModuleUnload", device.id());
        }
    }
}
