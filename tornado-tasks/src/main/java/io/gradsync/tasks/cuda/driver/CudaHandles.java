package io.gradsync.tasks.cuda.driver;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import jcuda.driver.CUstream;

/**
 * The JCuda handles behind gradsync's CUDA types, for gradsync's own modules (kernels, graphs,
 * the NCCL backend). They stay out of the exported API, so a user compiles against gradsync
 * alone: this package is exported only to gradsync's modules, and {@code io.gradsync.tasks.cuda}
 * installs the access when its classes load.
 */
public final class CudaHandles {
    /** What {@code io.gradsync.tasks.cuda} lets its own modules reach. */
    public interface Access {
        /** Makes the device's primary context current on this thread. */
        void bind(CudaDevice device);

        CUstream stream(CudaStream stream);
    }

    private static volatile Access access;

    private CudaHandles() {
    }

    /** Called once, by {@code io.gradsync.tasks.cuda}. */
    public static synchronized void install(Access implementation) {
        if (access != null) {
            throw new IllegalStateException("CUDA handle access is installed already");
        }
        access = implementation;
    }

    public static void bind(CudaDevice device) {
        access().bind(device);
    }

    public static CUstream stream(CudaStream stream) {
        return access().stream(stream);
    }

    private static Access access() {
        Access a = access;
        if (a == null) {
            try { // CudaDevice installs it in its static initializer
                Class.forName(CudaDevice.class.getName(), true, CudaDevice.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = access;
        }
        return a;
    }
}
