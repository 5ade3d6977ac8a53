package io.gradsync.tasks.device;

/**
 * A counter the host raises and streams wait for on the device: how work that the host finishes
 * later (host-side averaging) gates work already queued on a stream, with no host thread blocked
 * in between. A stream told to {@linkplain DeviceStream#waitUntil wait until} {@code n} runs on
 * once the host has {@linkplain #raise raised} the flag to {@code n} or beyond (compared modulo
 * 2^32, so it may count up for ever).
 *
 * <p>Thread-safety: {@link #raise} may be called from any thread; the flag only moves forward.
 */
public interface HostFlag extends AutoCloseable {

    /** Sets the flag to {@code value}; streams waiting for {@code value} or less run on. */
    void raise(int value);

    /** The flag's current value. */
    int value();

    @Override
    void close();
}
