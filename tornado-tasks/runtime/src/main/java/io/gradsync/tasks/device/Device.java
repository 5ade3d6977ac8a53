package io.gradsync.tasks.device;

/**
 * One device of one runtime: memory to allocate, streams to order work on, and host buffers
 * that the device copies to and from at full speed (pinned where the runtime can pin).
 *
 * <p>Devices are owned by the runtime that discovered them; closing a device releases what the
 * runtime holds for it (a retained CUDA context, an OpenCL queue), not the buffers handed out,
 * which the caller closes.
 *
 * <p>Thread-safety: every method may be called from any thread, also at once (a CUDA device makes
 * its context current on the calling thread first); {@link #synchronize()} waits for the work queued
 * before it was called. {@link #close()} must not race with the device's other calls: close it once
 * the threads using it are done.
 */
public interface Device extends AutoCloseable {

    DeviceRuntime runtime();

    /** Index of this device within its runtime, as listed by discovery. */
    int ordinal();

    /** A short stable id such as {@code cuda:0}, {@code opencl:0.1} or {@code jvm:2}. */
    default String id() {
        return runtime().label() + ":" + ordinal();
    }

    /** The product name the runtime reports. */
    String name();

    /** Device memory in bytes (for JVM devices, the host memory they may use). */
    long memoryBytes();

    /** Compute capability ({@code 9.0}) for CUDA, OpenCL version for OpenCL, {@code jvm} for JVM. */
    String capability();

    /** Allocates {@code bytes} of device memory; contents are undefined. */
    DeviceBuffer allocate(long bytes);

    /** Allocates host memory that this runtime's copies read and write directly (pinned on CUDA). */
    HostBuffer allocateHost(long bytes);

    /**
     * Wraps {@code bytes} of memory another library allocated at {@code address}, in place and
     * never freed by gradsync, after checking the range: a CUDA device pointer through the driver
     * ({@code CudaDevice.wrap}), a host address against the process's memory map
     * ({@code JvmDevice.wrap}).
     *
     * @throws IllegalArgumentException where the range fails this device's checks
     * @throws UnsupportedOperationException on a device that takes no such memory (OpenCL's)
     */
    default DeviceBuffer wrap(long address, long bytes) {
        throw new UnsupportedOperationException(id() + " takes no memory another library allocated (CUDA and JVM devices do)");
    }

    /** A new independent stream (CUDA stream, OpenCL in-order queue, JVM worker thread). */
    DeviceStream createStream();

    /** A reusable event for {@link DeviceStream#record(DeviceEvent)}; hot paths create theirs once. */
    DeviceEvent createEvent();

    /**
     * An event for ordering and waiting only, which {@link DeviceEvent#elapsedMillisSince} may
     * refuse: on CUDA it is recorded for less, as the GPU writes no timestamp (the synchronizers'
     * own events are of this kind). Elsewhere the same as {@link #createEvent()}.
     */
    default DeviceEvent createUntimedEvent() {
        return createEvent();
    }

    /**
     * A flag the host raises and this device's streams wait for ({@link DeviceStream#waitUntil}),
     * starting at 0.
     *
     * @throws UnsupportedOperationException where the runtime has none (OpenCL, a GPU without stream memory operations)
     */
    default HostFlag createHostFlag() {
        throw new UnsupportedOperationException(runtime().label() + " devices have no host flags");
    }

    /** Blocks until all work submitted to this device on any stream has finished. */
    void synchronize();

    /** Checks that {@code buffer} lives on this device and returns it. */
    default DeviceBuffer requireOwn(DeviceBuffer buffer, String what) {
        if (buffer.device() != this) {
            throw new IllegalArgumentException(what + " is on " + buffer.device().id()
                    + ", not on " + id());
        }
        return buffer;
    }

    @Override
    void close();
}
