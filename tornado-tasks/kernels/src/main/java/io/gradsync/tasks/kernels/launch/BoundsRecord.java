package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;

import java.lang.foreign.ValueLayout;

/**
 * A bounds-checked launch's record of its first access out of bounds
 * ({@link CompiledKernel#openClChecked()}, {@link CompiledKernel#ptxChecked}): two ints in the
 * device's memory, zeroed before the first launch, read and zeroed again by {@link #take}.
 *
 * <p>Thread-safety: one launch's; {@link #take} from one thread at a time.
 */
final class BoundsRecord implements AutoCloseable {
    private final CompiledKernel kernel;
    private final int[] lengths;
    private final DeviceBuffer record;
    private final HostBuffer read;

    /**
     * @param zeroOn  a stream of {@code device}, waited for once the record is zeroed (before any
     *                launch); null: one of its own, closed after
     * @param lengths the element count passed for each array parameter, in their order
     */
    BoundsRecord(Device device, DeviceStream zeroOn, CompiledKernel kernel, int[] lengths) {
        this.kernel = kernel;
        this.lengths = lengths.clone();
        record = device.allocate(8);
        try {
            read = device.allocateHost(8);
        } catch (RuntimeException e) {
            record.close();
            throw e;
        }
        try {
            DeviceStream s = zeroOn != null ? zeroOn : device.createStream();
            try {
                s.fill32(record, 0, 8, 0);
                s.synchronize();
            } finally {
                if (zeroOn == null) {
                    s.close();
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The record's memory: the kernel's last argument. */
    DeviceBuffer buffer() {
        return record;
    }

    /**
     * The access recorded since the last take, as Java's message has it, or null; waits for
     * {@code stream} (on which the launches ran, or after which they finished) and zeroes the record again on it.
     */
    String take(DeviceStream stream) {
        stream.copyToHost(record, 0, read, 0, 8);
        stream.synchronize();
        int code = read.segment().get(ValueLayout.JAVA_INT, 0);
        if (code == 0) {
            return null;
        }
        int index = read.segment().get(ValueLayout.JAVA_INT, 4);
        stream.fill32(record, 0, 8, 0);
        stream.synchronize();
        return kernel.outOfBounds(code, index, lengths);
    }

    @Override
    public void close() {
        try {
            record.close();
        } finally {
            read.close();
        }
    }
}
