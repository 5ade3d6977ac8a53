package io.gradsync.tasks.cuda.driver;

import static io.gradsync.tasks.cuda.driver.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import jcuda.Pointer;
import jcuda.driver.CUfunction;

/** A kernel entry point of a loaded module. */
public final class CudaFunction {
    private final CudaDevice device;
    private final String name;
    private final CUfunction function;

    CudaFunction(CudaDevice device, String name, CUfunction function) {
        this.device = device;
        this.name = name;
        this.function = function;
    }

    public String name() {
        return name;
    }

    public CudaDevice device() {
        return device;
    }

    /**
     * Launches a 1-D grid on {@code stream}. {@code parameters} is the kernel parameter array as
     * JCuda wants it: {@code Pointer.to(Pointer.to(devicePtr), Pointer.to(new int[]{n}), ...)}.
     */
    public void launch(CudaStream stream, int gridX, int blockX, int sharedBytes, Pointer parameters) {
        if (!stream.device().sameGpu(device)) { // a module belongs to the GPU's context, whichever handle
            throw new IllegalArgumentException("kernel " + name + " of " + device.id() + " launched on a stream of "
                    + stream.device().id());
        }
        if (gridX <= 0 || blockX <= 0 || blockX > 1024) {
            throw new IllegalArgumentException("kernel " + name + ": bad launch shape grid=" + gridX + " block=" + blockX);
        }
        CudaHandles.bind(device);
        check(cuLaunchKernel(function, gridX, 1, 1, blockX, 1, 1, sharedBytes, CudaHandles.stream(stream), parameters, null),
                "cuLaunchKernel(" + name + ")", device.id());
    }
}
