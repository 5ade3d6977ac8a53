package io.gradsync.examples;

import io.gradsync.sync.Gradient;
import io.gradsync.tasks.device.DeviceStream;

/**
 * One replica's gradient memory and stream as the user's program owns them, and how its own code
 * writes gradients there and reads the average back, both queued on its own stream.
 */
interface UserMemory extends AutoCloseable {

    /** The user's stream, as gradsync sees it. */
    DeviceStream stream();

    /** A region of {@code count} floats for parameter {@code name}: the program's own memory, wrapped for gradsync. */
    Gradient allocate(String name, int count);

    /** Queues on the user's stream: {@code gradient} becomes {@code values}. Returns at once. */
    void write(Gradient gradient, float[] values);

    /** Queues on the user's stream a read of {@code gradient}, waits for it, and fills {@code out}. */
    void read(Gradient gradient, float[] out);

    @Override
    void close();
}
