package io.gradsync.tasks.device;

/**
 * A point in a stream's work.
 *
 * <p>Thread-safety: any thread may wait on or query an event; a wait sees the mark recorded before it was called, so recording again while another thread waits is the caller's race.
 */
public interface DeviceEvent extends AutoCloseable {

    /** Blocks until the work before this event has finished. */
    void synchronize();

    boolean isDone();

    /** Milliseconds between {@code earlier} and this event, both completed, on the same device. */
    double elapsedMillisSince(DeviceEvent earlier);

    @Override
    void close();
}
