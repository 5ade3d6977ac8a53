package io.gradsync.sync.bucket;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.ExecutionPlan;
import io.gradsync.tasks.kernels.GradientKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The global-norm pass over averaged buckets: the sum of squares in float64 of one replica (after
 * averaging all replicas hold the same values) and in-place scaling of every replica.
 *
 * <p>On JVM devices the buckets are host memory and are read and written where they are. On
 * CUDA and OpenCL devices the built-in kernels run on the buckets themselves through task graphs
 * bound to the bucket memory: {@code sumOfSquaresPartials*} (deterministic fp64 partials, added
 * here in fp64) and {@link ClipKernels} for scaling; only the partials cross to the host. It is a
 * second pass over the averaged gradients, used where the backend cannot sum the squares in its own
 * averaging pass ({@code cpu} does: {@link io.gradsync.sync.FusedSumOfSquares}).
 */
final class BucketNorms implements AutoCloseable {
    /** fp64 partial sums per bucket: enough threads to fill a GPU, 512 KiB to copy back. */
    private static final int MAX_SLOTS = 1 << 16;

    private final GradientBuckets buckets;
    private final FloatArray factor = new FloatArray(1);
    private ExecutionPlan[] normPlans;   // [bucket], on replica 0; built on first use
    private DoubleArray[] partials;      // [bucket]
    private ExecutionPlan[][] scalePlans; // [replica][bucket]

    BucketNorms(GradientBuckets buckets) {
        this.buckets = buckets;
    }

    double sumOfSquares() {
        double sum = 0;
        for (GradientBuckets.Bucket b : buckets.buckets()) {
            Gradient g = buckets.bucketGradient(0, b.index());
            if (g.buffer() instanceof JvmBuffer jb) {
                jb.device().synchronize(); // work queued on the device's streams writes this memory
                sum += sumOfSquares(hostView(jb, g), b.dtype(), b.count());
            } else {
                normPlan(b).execute();
                DoubleArray p = partials[b.index()];
                for (int i = 0; i < p.getSize(); i++) {
                    sum += p.get(i);
                }
            }
        }
        return sum;
    }

    void scaleAll(float scale) {
        factor.set(0, scale);
        for (int r = 0; r < buckets.devices().size(); r++) {
            for (GradientBuckets.Bucket b : buckets.buckets()) {
                Gradient g = buckets.bucketGradient(r, b.index());
                if (g.buffer() instanceof JvmBuffer jb) {
                    jb.device().synchronize();
                    scale(hostView(jb, g), b.dtype(), b.count(), scale);
                } else {
                    scalePlan(r, b).execute();
                }
            }
        }
    }

    private ExecutionPlan normPlan(GradientBuckets.Bucket b) {
        if (normPlans == null) {
            normPlans = new ExecutionPlan[buckets.buckets().size()];
            partials = new DoubleArray[buckets.buckets().size()];
        }
        if (normPlans[b.index()] == null) {
            int count = Math.toIntExact(b.count());
            DoubleArray p = new DoubleArray(Math.min(MAX_SLOTS, count));
            KernelArray x = handle(b.dtype(), count);
            TaskGraph g = new TaskGraph("norm" + b.index());
            switch (x) {
                case FloatArray f -> g.task("sumOfSquares", GradientKernels::sumOfSquaresPartials, null, f, p);
                case Bfloat16Array h -> g.task("sumOfSquares", GradientKernels::sumOfSquaresPartialsBf16, null, h, p);
                case HalfArray h -> g.task("sumOfSquares", GradientKernels::sumOfSquaresPartialsF16, null, h, p);
                default -> throw new IllegalStateException();
            }
            g.transferToHost(DataTransferMode.EVERY_EXECUTION, p);
            normPlans[b.index()] = bound(g, x, 0, b);
            partials[b.index()] = p;
        }
        return normPlans[b.index()];
    }

    private ExecutionPlan scalePlan(int replica, GradientBuckets.Bucket b) {
        if (scalePlans == null) {
            scalePlans = new ExecutionPlan[buckets.devices().size()][buckets.buckets().size()];
        }
        if (scalePlans[replica][b.index()] == null) {
            KernelArray x = handle(b.dtype(), Math.toIntExact(b.count()));
            TaskGraph g = new TaskGraph("clip" + b.index()).transferToDevice(DataTransferMode.EVERY_EXECUTION, factor);
            switch (x) {
                case FloatArray f -> g.task("scale", ClipKernels::scaleBy, f, factor);
                case Bfloat16Array h -> g.task("scale", ClipKernels::scaleByBf16, h, factor);
                case HalfArray h -> g.task("scale", ClipKernels::scaleByF16, h, factor);
                default -> throw new IllegalStateException();
            }
            scalePlans[replica][b.index()] = bound(g, x, replica, b);
        }
        return scalePlans[replica][b.index()];
    }

    private ExecutionPlan bound(TaskGraph g, KernelArray x, int replica, GradientBuckets.Bucket b) {
        Device d = buckets.devices().get(replica);
        Gradient bucket = buckets.bucketGradient(replica, b.index());
        return new ExecutionPlan(g.snapshot()).withDevice(d)
                .bind(x, d, new DeviceSlice(bucket.buffer(), bucket.byteOffset(), x.getSize()));
    }

    /** The bucket's bytes within a JVM device's buffer. */
    private static MemorySegment hostView(JvmBuffer buffer, Gradient g) {
        return buffer.segment().asSlice(g.byteOffset(), g.byteSize());
    }

    /**
     * An array that only names a bucket's size and type: it is bound to the bucket's device memory
     * and never transferred, so its host memory is never touched and none is allocated for it.
     */
    private static KernelArray handle(DType dtype, int count) {
        MemorySegment sizeOnly = MemorySegment.NULL.reinterpret((long) count * dtype.bytes());
        return switch (dtype) {
            case FP32 -> FloatArray.wrap(sizeOnly);
            case BF16 -> Bfloat16Array.wrap(sizeOnly);
            case FP16 -> HalfArray.wrap(sizeOnly);
        };
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
        if (normPlans != null) {
            for (ExecutionPlan p : normPlans) {
                if (p != null) {
                    p.close();
                }
            }
            for (DoubleArray p : partials) {
                if (p != null) {
                    p.close();
                }
            }
        }
        if (scalePlans != null) {
            for (ExecutionPlan[] row : scalePlans) {
                for (ExecutionPlan p : row) {
                    if (p != null) {
                        p.close();
                    }
                }
            }
        }
        factor.close();
    }
}
