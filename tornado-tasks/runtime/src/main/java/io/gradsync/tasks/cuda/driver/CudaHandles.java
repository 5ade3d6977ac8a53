package io.gradsync.tasks.cuda.driver;

import io.gradsync.tasks.internal.Installed;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.DeviceEvent;
import java.util.function.ToIntFunction;
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

        /** The handle of a stream whose close the caller controls (one of its own). */
        CUstream stream(CudaStream stream);

        /** Runs a driver call on the stream's handle with the stream held open (its close waits); returns the result code. */
        int onStream(CudaStream stream, ToIntFunction<CUstream> call);

        /** See {@link CudaHandles#waitForExternal}. */
        void waitForExternal(CudaStream stream, DeviceEvent event);
    }

    private static final Installed<Access> ACCESS = new Installed<>("CUDA handle", CudaDevice.class);

    private CudaHandles() {
    }

    /** Called once, by the package that owns the handles. */
    public static void install(Access implementation) {
        ACCESS.install(implementation);
    }

    public static void bind(CudaDevice device) {
        ACCESS.get().bind(device);
    }

    public static CUstream stream(CudaStream stream) {
        return ACCESS.get().stream(stream);
    }

    public static int onStream(CudaStream stream, ToIntFunction<CUstream> call) {
        return ACCESS.get().onStream(stream, call);
    }

    /**
     * {@code stream} waits for {@code event}; while the stream is captured into a graph, as a node
     * of it that waits, at each launch, for the event's latest record made outside the graph.
     */
    public static void waitForExternal(CudaStream stream, DeviceEvent event) {
        ACCESS.get().waitForExternal(stream, event);
    }
}
