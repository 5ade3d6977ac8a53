package io.gradsync.sync;

import io.gradsync.tasks.device.DeviceBuffer;
import java.util.Objects;

/**
 * A named gradient: {@code count} elements of {@code dtype} at {@code byteOffset} in a device
 * buffer. Several gradients may share one buffer (a bucket), each a view into it; two gradients
 * of one replica must not overlap. Immutable, so safe to share between threads.
 */
public record Gradient(String name, DeviceBuffer buffer, long byteOffset, long count, DType dtype) {

    public Gradient {
        Objects.requireNonNull(name, "gradient name");
        Objects.requireNonNull(buffer, "buffer of gradient '" + name + "'");
        Objects.requireNonNull(dtype, "dtype of gradient '" + name + "'");
        if (name.isBlank()) {
            throw new IllegalArgumentException("gradient name must not be blank");
        }
        if (count < 0) {
            throw new IllegalArgumentException("gradient '" + name + "': count must be >= 0, got " + count);
        }
        if (byteOffset < 0 || byteOffset % dtype.bytes() != 0) {
            throw new IllegalArgumentException("gradient '" + name + "': byte offset " + byteOffset
                    + " must be >= 0 and a multiple of " + dtype.bytes() + " (" + dtype.label() + ")");
        }
        long bytes;
        try {
            bytes = Math.multiplyExact(count, (long) dtype.bytes());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("gradient '" + name + "': count " + count + " overflows");
        }
        if (byteOffset > buffer.byteSize() || bytes > buffer.byteSize() - byteOffset) {
            throw new IllegalArgumentException("gradient '" + name + "': " + count + " " + dtype.label()
                    + " elements at byte " + byteOffset + " do not fit a buffer of " + buffer.byteSize() + " bytes");
        }
        // gradsync's own buffers are 256-byte aligned; wrapped ones start wherever their owner says
        if (!buffer.isOwned() && !buffer.isClosed() && (buffer.address() + byteOffset) % dtype.bytes() != 0) {
            throw new IllegalArgumentException("gradient '" + name + "': address 0x" + Long.toHexString(buffer.address() + byteOffset)
                    + " is not aligned to its " + dtype.bytes() + "-byte " + dtype.label() + " elements");
        }
    }

    /**
     * The device address of the gradient's first element ({@link DeviceBuffer#address()} plus
     * {@link #byteOffset()}): where a framework's backward writes it.
     */
    public long address() {
        return buffer.address() + byteOffset;
    }

    /** The whole buffer as one gradient. */
    public static Gradient of(String name, DeviceBuffer buffer, DType dtype) {
        if (buffer.byteSize() % dtype.bytes() != 0) {
            throw new IllegalArgumentException("gradient '" + name + "': buffer of " + buffer.byteSize()
                    + " bytes is not a whole number of " + dtype.label() + " elements");
        }
        return new Gradient(name, buffer, 0, buffer.byteSize() / dtype.bytes(), dtype);
    }

    public long byteSize() {
        return count * dtype.bytes();
    }
}
