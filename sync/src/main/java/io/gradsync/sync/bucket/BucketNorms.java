package io.gradsync.sync.bucket;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.internal.HostAverage;
import io.gradsync.sync.internal.SquareSlots;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DataTransferMode;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.api.TaskGraph;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.ExecutionPlan;
import io.gradsync.tasks.kernels.ReductionKernels;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The global-norm pass over averaged buckets: the sum of squares in float64 of one replica (after
 * averaging all replicas hold the same values) and in-place scaling of every replica.
 *
 * <p>Buckets lie back to back, so each run of consecutive buckets of one dtype is one range that
 * one kernel covers (the gaps between views are zero and stay zero). On JVM devices the buckets
 * are host memory and are read and written where they are. On CUDA and OpenCL devices the
 * built-in kernels run on the bucket memory itself through task graphs bound to it: the sum of
 * squares in two stages, {@code sumOfSquaresPartials*} into enough fp64 partials to keep the
 * device busy and {@code sumPartials} adding those down to at most 4096, the only numbers that
 * cross to the host (one stage where a range is small; {@link SquareSlots}, as the ptx backend sums) (added there in fp64, in a fixed order); {@link ClipKernels} for scaling. It
 * is a second pass over the averaged gradients, used where the backend cannot sum the squares in
 * its own averaging pass ({@code cpu} and {@code ptx} do: {@link io.gradsync.sync.FusedSumOfSquares}).
 */
final class BucketNorms implements AutoCloseable {
    /** Consecutive buckets of one dtype, at most {@link Integer#MAX_VALUE} elements: one kernel's array. */
    private record Range(int index, int first, int last, DType dtype, int count) {
    }

    private final GradientBuckets buckets;
    private final List<Range> ranges;
    private final FloatArray factor = new FloatArray(1);
    private final ExecutionPlan[] normPlans;    // [range], on replica 0; built on first use
    private final DoubleArray[] partials;       // [range]: what the host adds
    private final DoubleArray[] widePartials;   // [range]: the first stage's, on the device only
    private final ExecutionPlan[][] scalePlans; // [replica][range]

    BucketNorms(GradientBuckets buckets) {
        this.buckets = buckets;
        List<Range> found = new ArrayList<>();
        List<GradientBuckets.Bucket> all = buckets.buckets();
        int first = 0;
        long count = 0;
        for (int b = 0; b < all.size(); b++) {
            GradientBuckets.Bucket bucket = all.get(b);
            if (b > first && (bucket.dtype() != all.get(first).dtype() || count + bucket.count() > Integer.MAX_VALUE)) {
                found.add(new Range(found.size(), first, b - 1, all.get(first).dtype(), (int) count));
                first = b;
                count = 0;
            }
            count += bucket.count();
        }
        found.add(new Range(found.size(), first, all.size() - 1, all.get(first).dtype(), Math.toIntExact(count)));
        this.ranges = List.copyOf(found);
        this.normPlans = new ExecutionPlan[ranges.size()];
        this.partials = new DoubleArray[ranges.size()];
        this.widePartials = new DoubleArray[ranges.size()];
        this.scalePlans = new ExecutionPlan[buckets.devices().size()][ranges.size()];
    }

    double sumOfSquares() {
        double sum = 0;
        for (Range r : ranges) {
            Gradient g = range(0, r);
            if (g.buffer() instanceof JvmBuffer jb) {
                jb.device().synchronize(); // work queued on the device's streams writes this memory
                sum += HostAverage.sumOfSquares(r.dtype(), hostView(jb, g), r.count());
            } else {
                normPlan(r).execute();
                DoubleArray p = partials[r.index()];
                for (int i = 0; i < p.getSize(); i++) {
                    sum += p.get(i);
                }
            }
        }
        return sum;
    }

    void scaleAll(float scale) {
        factor.set(0, scale);
        for (int replica = 0; replica < buckets.devices().size(); replica++) {
            for (Range r : ranges) {
                Gradient g = range(replica, r);
                if (g.buffer() instanceof JvmBuffer jb) {
                    jb.device().synchronize();
                    MemorySegment values = hostView(jb, g);
                    HostAverage.scale(r.dtype(), values, 0, r.count(), scale);
                } else {
                    scalePlan(replica, r).execute();
                }
            }
        }
    }

    private Gradient range(int replica, Range r) {
        return buckets.spanReplicas(r.first(), r.last()).get(replica).gradients().getFirst();
    }

    private ExecutionPlan normPlan(Range r) {
        if (normPlans[r.index()] == null) {
            SquareSlots split = SquareSlots.of(r.count());
            DoubleArray p = new DoubleArray(split.host());
            DoubleArray w = split.wide() > 0 ? new DoubleArray(split.wide()) : null;
            DoubleArray first = w != null ? w : p;
            KernelArray x = handle(r.dtype(), r.count());
            TaskGraph g = new TaskGraph("norm" + r.index());
            switch (x) {
                case FloatArray f -> g.task("squares", ReductionKernels::sumOfSquaresPartials, null, f, first);
                case Bfloat16Array h -> g.task("squares", ReductionKernels::sumOfSquaresPartialsBf16, null, h, first);
                case HalfArray h -> g.task("squares", ReductionKernels::sumOfSquaresPartialsF16, null, h, first);
                default -> throw new IllegalStateException();
            }
            if (w != null) {
                g.task("partials", ReductionKernels::sumPartials, null, w, p);
            }
            g.transferToHost(DataTransferMode.EVERY_EXECUTION, p);
            normPlans[r.index()] = bound(g, x, 0, r);
            widePartials[r.index()] = w;
            partials[r.index()] = p;
        }
        return normPlans[r.index()];
    }

    private ExecutionPlan scalePlan(int replica, Range r) {
        if (scalePlans[replica][r.index()] == null) {
            KernelArray x = handle(r.dtype(), r.count());
            TaskGraph g = new TaskGraph("clip" + r.index()).transferToDevice(DataTransferMode.EVERY_EXECUTION, factor);
            switch (x) {
                case FloatArray f -> g.task("scale", ClipKernels::scaleBy, f, factor);
                case Bfloat16Array h -> g.task("scale", ClipKernels::scaleByBf16, h, factor);
                case HalfArray h -> g.task("scale", ClipKernels::scaleByF16, h, factor);
                default -> throw new IllegalStateException();
            }
            scalePlans[replica][r.index()] = bound(g, x, replica, r);
        }
        return scalePlans[replica][r.index()];
    }

    private ExecutionPlan bound(TaskGraph g, KernelArray x, int replica, Range r) {
        Device d = buckets.devices().get(replica);
        Gradient range = range(replica, r);
        return new ExecutionPlan(g.snapshot()).withDevice(d)
                .bind(x, d, new DeviceSlice(range.buffer(), range.byteOffset(), x.getSize()));
    }

    /** The range's bytes within a JVM device's buffer. */
    private static MemorySegment hostView(JvmBuffer buffer, Gradient g) {
        return buffer.segment().asSlice(g.byteOffset(), g.byteSize());
    }

    /**
     * An array that only names a bucket's size and type: it is bound to the bucket's device memory
     * and never transferred, so its host memory is never touched and none is allocated for it.
     */
    @SuppressWarnings("restricted") // a zero-address segment of the bucket's size: never read or written
    private static KernelArray handle(DType dtype, int count) {
        MemorySegment sizeOnly = MemorySegment.NULL.reinterpret((long) count * dtype.bytes());
        return switch (dtype) {
            case FP32 -> FloatArray.wrap(sizeOnly);
            case BF16 -> Bfloat16Array.wrap(sizeOnly);
            case FP16 -> HalfArray.wrap(sizeOnly);
        };
    }

    @Override
    public void close() {
        for (ExecutionPlan p : normPlans) {
            if (p != null) {
                p.close();
            }
        }
        for (DoubleArray[] arrays : new DoubleArray[][] {partials, widePartials}) {
            for (DoubleArray p : arrays) {
                if (p != null) {
                    p.close();
                }
            }
        }
        for (ExecutionPlan[] row : scalePlans) {
            for (ExecutionPlan p : row) {
                if (p != null) {
                    p.close();
                }
            }
        }
        factor.close();
    }
}
