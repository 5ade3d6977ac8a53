package io.gradsync.sync.backend.ptx;

import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.kernels.KernelSpec;

/**
 * How the ptx backend's parts launch and record kernels, apart from the coordinator so that its
 * parts and the tests (which launch the kernels as Java on JVM devices) share them without a cycle.
 */
final class PtxLaunches {
    private PtxLaunches() {
    }

    /** Prepares a kernel launch on device {@code device} (index) once; launched every call. */
    @FunctionalInterface
    interface Launcher {
        Launch prepare(int device, KernelSpec spec, int count, Object[] args);
    }

    /** A prepared kernel launch. */
    @FunctionalInterface
    interface Launch {
        void launch(DeviceStream stream);
    }

    /**
     * Captures one call's whole schedule, as enqueued by {@code enqueue} starting from
     * {@code origin} (other streams fork from it and join back), for replay: a CUDA graph on GPUs.
     */
    @FunctionalInterface
    interface Recorder {
        Replay record(DeviceStream origin, Runnable enqueue);

        /**
         * In {@code enqueue}: {@code stream} waits, at each replay, for {@code event}'s latest record
         * made outside the recording (a CUDA graph's external wait node). Enqueued again on JVM
         * streams, a plain wait.
         */
        default void waitOutside(DeviceStream stream, DeviceEvent event) {
            stream.waitFor(event);
        }
    }

    /** A recorded schedule: {@link #replay} enqueues all of it behind {@code origin}'s prior work. */
    interface Replay extends AutoCloseable {
        void replay(DeviceStream origin);

        @Override
        void close();
    }
}
