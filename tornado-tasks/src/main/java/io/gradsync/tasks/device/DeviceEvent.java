package io.gradsync.tasks.device;

/** A point in a stream's work. */
public interface DeviceEvent extends AutoCloseable {

    /** Blocks until the work before this event has finished. */
    void synchronize();

    boolean isDone();

    /** Milliseconds between {@code earlier} and this event, both completed, on the same device. */
    double elapsedMillisSince(DeviceEvent earlier);

    @Override
    void close();
}
