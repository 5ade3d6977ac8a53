package io.gradsync.examples;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * On a JVM device: gradients in native segments of the program's own arena (wrapped, not copied),
 * or gradsync's bucket segments, written and read by the program's own Java code on its stream.
 */
final class JvmUserMemory implements UserMemory {
    private final JvmDevice device;
    private final Arena arena = Arena.ofShared();
    private final JvmStream stream;
    private final List<JvmBuffer> wrapped = new ArrayList<>();

    JvmUserMemory(JvmDevice device) {
        this.device = device;
        this.stream = (JvmStream) device.createStream();
    }

    @Override
    public DeviceStream stream() {
        return stream;
    }

    @Override
    public Gradient allocate(String name, int count) {
        JvmBuffer b = device.wrap(arena.allocate((long) count * Float.BYTES, 64));
        wrapped.add(b);
        return Gradient.of(name, b, DType.FP32);
    }

    private static MemorySegment values(Gradient g) {
        return ((JvmBuffer) g.buffer()).segment().asSlice(g.byteOffset(), g.byteSize());
    }

    @Override
    public void write(Gradient g, float[] v) {
        float[] copy = v.clone(); // the caller reuses its array; the stream runs later
        MemorySegment to = values(g);
        stream.submit(() -> MemorySegment.copy(copy, 0, to, ValueLayout.JAVA_FLOAT, 0, copy.length));
    }

    @Override
    public void read(Gradient g, float[] out) {
        MemorySegment from = values(g);
        stream.submit(() -> MemorySegment.copy(from, ValueLayout.JAVA_FLOAT, 0, out, 0, out.length));
        stream.synchronize();
    }

    @Override
    public void close() {
        stream.close();
        wrapped.forEach(JvmBuffer::close);
        arena.close();
    }
}
