package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.AbstractHostBuffer;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.device.HostFlag;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A simulated device whose memory is off-heap host memory. Streams are single worker threads, so
 * asynchronous copies and events behave as on a GPU, and code written against {@link Device}
 * runs unchanged with no accelerator present.
 *
 * <p>Thread-safety: every method may be called from any thread, also at once (streams are kept in a
 * concurrent list); {@link #close()} closes the streams created before it, so it must not race with
 * {@link #createStream()} on another thread (a stream made meanwhile may stay open).
 */
public final class JvmDevice implements Device {
    /** Buffers are aligned like a GPU allocation so that kernels see the same alignment everywhere. */
    static final long ALIGNMENT = 256;

    private final int ordinal;
    private final List<JvmStream> streams = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    JvmDevice(int ordinal) {
        this.ordinal = ordinal;
    }

    @Override
    public DeviceRuntime runtime() {
        return DeviceRuntime.JVM;
    }

    @Override
    public int ordinal() {
        return ordinal;
    }

    @Override
    public String name() {
        return "JVM device " + ordinal + " (host memory, " + Runtime.getRuntime().availableProcessors() + " cores)";
    }

    @Override
    public long memoryBytes() {
        return Runtime.getRuntime().maxMemory();
    }

    @Override
    public String capability() {
        return "jvm";
    }

    @Override
    public JvmBuffer allocate(long bytes) {
        checkOpen();
        requirePositive(bytes);
        Arena arena = Arena.ofShared();
        return new JvmBuffer(this, arena, arena.allocate(bytes, ALIGNMENT));
    }

    /**
     * Makes the caller's native segment a buffer of this device, without copying: gradients in it
     * are averaged in place. gradsync never frees it (its arena does); the segment must stay alive
     * while gradsync uses the buffer, or the next use throws {@link IllegalStateException}.
     *
     * @throws IllegalArgumentException when the segment is empty, on the Java heap, read-only, or
     *         confined to one thread (streams work on their own threads: use a shared or global arena)
     */
    public JvmBuffer wrap(MemorySegment segment) {
        checkOpen();
        Objects.requireNonNull(segment, "segment");
        String what = "segment " + segment + " for " + id();
        if (!segment.isNative()) {
            throw new IllegalArgumentException(what + ": is on the Java heap; JVM devices work on native memory (Arena.allocate)");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException(what + ": is empty");
        }
        if (segment.isReadOnly()) {
            throw new IllegalArgumentException(what + ": is read-only, and averaging writes in place");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalArgumentException(what + ": its arena is closed");
        }
        if (!segment.isAccessibleBy(new Thread(() -> { }))) {
            throw new IllegalArgumentException(what + ": is confined to one thread (Arena.ofConfined); "
                    + "streams run on their own threads, so use Arena.ofShared() or Arena.global()");
        }
        return new JvmBuffer(this, null, segment);
    }

    /**
     * Wraps {@code bytes} of native memory at {@code address} that another library allocated (a
     * framework's host tensor, libtorch's {@code data_ptr()}), so that gradients in it are
     * averaged in place; the same as {@link #wrap(MemorySegment)} of that range, without the
     * restricted {@code MemorySegment.reinterpret} in the caller's code. gradsync never frees it.
     *
     * <p>The range is checked against this process's memory map first: it must lie in mappings
     * that are readable and writable, so a wrong address or size is an exception, not a crash.
     * Memory the owner has freed but its allocator keeps mapped cannot be told apart from live
     * memory: wrap only memory that stays allocated while gradsync uses the buffer.
     *
     * @throws IllegalArgumentException when the address is 0, the size is not positive, the range
     *         runs past the end of the address space, or a byte of it is not mapped readable and writable
     * @throws UnsupportedOperationException where this system has no process memory map to check
     *         against (Linux's {@code /proc/self/maps}); wrap a {@code MemorySegment} there
     */
    @Override
    @SuppressWarnings("restricted") // the range is checked against the process's mappings just before
    public JvmBuffer wrap(long address, long bytes) {
        checkOpen();
        String what = "native memory at 0x" + Long.toHexString(address) + " (" + bytes + " bytes) for " + id();
        if (address == 0) {
            throw new IllegalArgumentException(what + ": the address is null");
        }
        if (bytes <= 0) {
            throw new IllegalArgumentException(what + ": the size must be positive");
        }
        if (Long.compareUnsigned(address + bytes, address) < 0) {
            throw new IllegalArgumentException(what + ": runs past the end of the address space");
        }
        ProcessMappings.requireReadWrite(address, bytes, what);
        return new JvmBuffer(this, null, MemorySegment.ofAddress(address).reinterpret(bytes));
    }

    @Override
    public HostBuffer allocateHost(long bytes) {
        checkOpen();
        requirePositive(bytes);
        Arena arena = Arena.ofShared();
        return new AbstractHostBuffer(arena.allocate(bytes, ALIGNMENT), false) {
            @Override
            protected void free() {
                arena.close();
            }
        };
    }

    @Override
    public DeviceStream createStream() {
        checkOpen();
        JvmStream stream = new JvmStream(this);
        streams.add(stream);
        return stream;
    }

    @Override
    public HostFlag createHostFlag() {
        return new JvmHostFlag();
    }

    @Override
    public DeviceEvent createEvent() {
        return new JvmEvent();
    }

    @Override
    public void synchronize() {
        for (JvmStream stream : streams) {
            stream.synchronize();
        }
    }

    void forget(JvmStream stream) {
        streams.remove(stream);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(id() + " is closed");
        }
    }

    private static void requirePositive(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, got " + bytes);
        }
    }

    @Override
    public void close() {
        closed = true;
        for (JvmStream stream : streams) {
            stream.close();
        }
    }

    @Override
    public String toString() {
        return id();
    }

    /** Used by the buffer to check ownership. */
    static JvmBuffer own(DeviceBuffer buffer, String what) {
        if (!(buffer instanceof JvmBuffer jvm)) {
            throw new IllegalArgumentException(what + " is a " + buffer.device().runtime().label()
                    + " buffer, not a jvm buffer");
        }
        return jvm;
    }
}
