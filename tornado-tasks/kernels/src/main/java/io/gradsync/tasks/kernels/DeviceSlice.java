package io.gradsync.tasks.kernels;

import io.gradsync.tasks.device.DeviceBuffer;

/**
 * A kernel array argument on a device: {@code count} elements starting {@code byteOffset} bytes
 * into {@code buffer}. The kernel sees a pointer to the first element and {@code count} as
 * {@code getSize()}, so a slice of a gradient bucket is passed without copying.
 *
 * <p>Immutable: safe to share between threads.
 */
public record DeviceSlice(DeviceBuffer buffer, long byteOffset, int count) {

    public DeviceSlice {
        if (byteOffset < 0 || count < 0) {
            throw new IllegalArgumentException("negative offset or count: " + byteOffset + ", " + count);
        }
    }

    /** The whole buffer as {@code elementBytes}-byte elements. */
    public static DeviceSlice whole(DeviceBuffer buffer, int elementBytes) {
        return new DeviceSlice(buffer, 0, Math.toIntExact(buffer.byteSize() / elementBytes));
    }

    /** Checks that the slice fits its buffer and is aligned for {@code elementBytes}-byte elements. */
    public void check(int elementBytes, String what) {
        if (byteOffset % elementBytes != 0) {
            throw new IllegalArgumentException(what + ": offset " + byteOffset + " is not a multiple of " + elementBytes);
        }
        if (byteOffset + (long) count * elementBytes > buffer.byteSize()) {
            throw new IllegalArgumentException(what + ": " + count + " elements of " + elementBytes + " bytes at offset "
                    + byteOffset + " overrun a buffer of " + buffer.byteSize() + " bytes");
        }
    }
}
