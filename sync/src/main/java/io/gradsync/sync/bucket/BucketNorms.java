package io.gradsync.sync.bucket;

import io.gradsync.sync.DType;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.jvm.JvmBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The global-norm pass over averaged buckets: sum of squares in float64 (of one replica: after
 * averaging all replicas hold the same values) and in-place scaling of every replica.
 *
 * <p>JVM device buffers are read and written where they are. Other devices stage each bucket
 * through one reusable host buffer per replica (a copy out and, when clipping, back). That is
 * correct on every runtime but costs a round trip; fusing the norm into a backend's own averaging
 * kernel (which already reads every element) is the fast path left for the device backends.
 */
final class BucketNorms implements AutoCloseable {
    private final GradientBuckets buckets;
    private final HostBuffer[] staging; // per replica, lazily, sized to the largest bucket
    private final long largest;

    BucketNorms(GradientBuckets buckets) {
        this.buckets = buckets;
        this.staging = new HostBuffer[buckets.devices().size()];
        this.largest = buckets.buckets().stream().mapToLong(GradientBuckets.Bucket::byteSize).max().orElse(0);
    }

    double sumOfSquares() {
        double sum = 0;
        for (GradientBuckets.Bucket b : buckets.buckets()) {
            DeviceBuffer buffer = buckets.buffer(0, b.index());
            MemorySegment seg = read(0, buffer, b.byteSize());
            sum += sumOfSquares(seg, b.dtype(), b.count());
        }
        return sum;
    }

    void scaleAll(float scale) {
        for (int r = 0; r < staging.length; r++) {
            for (GradientBuckets.Bucket b : buckets.buckets()) {
                DeviceBuffer buffer = buckets.buffer(r, b.index());
                MemorySegment seg = read(r, buffer, b.byteSize());
                scale(seg, b.dtype(), b.count(), scale);
                if (!(buffer instanceof JvmBuffer)) {
                    Device d = buffer.device();
                    try (DeviceStream s = d.createStream()) {
                        s.copyFromHost(staging[r], 0, buffer, 0, b.byteSize());
                        s.synchronize();
                    }
                }
            }
        }
    }

    /** The bucket's bytes: the device memory itself on the JVM, else a fresh copy in host memory. */
    private MemorySegment read(int replica, DeviceBuffer buffer, long bytes) {
        if (buffer instanceof JvmBuffer jb) {
            buffer.device().synchronize(); // earlier work on the device's streams writes this memory
            return jb.segment();
        }
        if (staging[replica] == null) {
            staging[replica] = buffer.device().allocateHost(largest);
        }
        try (DeviceStream s = buffer.device().createStream()) {
            s.copyToHost(buffer, 0, staging[replica], 0, bytes);
            s.synchronize();
        }
        return staging[replica].segment();
    }

    static double sumOfSquares(MemorySegment seg, DType dtype, long count) {
        double sum = 0;
        for (long i = 0; i < count; i++) {
            double v = get(seg, dtype, i);
            sum += v * v;
        }
        return sum;
    }

    static void scale(MemorySegment seg, DType dtype, long count, float s) {
        for (long i = 0; i < count; i++) {
            float v = get(seg, dtype, i) * s;
            switch (dtype) {
                case FP32 -> seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                case BF16 -> seg.setAtIndex(ValueLayout.JAVA_SHORT, i, HalfFloats.floatToBf16(v));
                case FP16 -> seg.setAtIndex(ValueLayout.JAVA_SHORT, i, HalfFloats.floatToHalf(v));
            }
        }
    }

    private static float get(MemorySegment seg, DType dtype, long i) {
        return switch (dtype) {
            case FP32 -> seg.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            case BF16 -> HalfFloats.bf16ToFloat(seg.getAtIndex(ValueLayout.JAVA_SHORT, i));
            case FP16 -> HalfFloats.halfToFloat(seg.getAtIndex(ValueLayout.JAVA_SHORT, i));
        };
    }

    @Override
    public void close() {
        for (HostBuffer h : staging) {
            if (h != null) {
                h.close();
            }
        }
    }
}
