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
        launch(stream, new int[] {gridX, 1, 1}, new int[] {blockX, 1, 1}, sharedBytes, parameters);
    }

    /** Launches a grid of {@code grid[0..2]} blocks of {@code block[0..2]} threads on {@code stream}. */
    public void launch(CudaStream stream, int[] grid, int[] block, int sharedBytes, Pointer parameters) {
        if (!stream.device().sameGpu(device)) { // a module belongs to the GPU's context, whichever handle
            throw new IllegalArgumentException("kernel " + name + " of " + device.id() + " launched on a stream of "
                    + stream.device().id());
        }
        long threads = (long) block[0] * block[1] * block[2];
        if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0 || grid[1] > 65535 || grid[2] > 65535
                || block[0] <= 0 || block[1] <= 0 || block[2] <= 0 || block[2] > 64 || threads > 1024) {
            throw new IllegalArgumentException("kernel " + name + ": bad launch shape grid=" + java.util.Arrays.toString(grid)
                    + " block=" + java.util.Arrays.toString(block) + " (at most 1024 threads a block, 64 in z, 65535 blocks in y and z)");
        }
        CudaHandles.bind(device);
        check(CudaHandles.onStream(stream, st -> cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                sharedBytes, st, parameters, null)), "cuLaunchKernel(" + name + ")", device.id());
    }
}
