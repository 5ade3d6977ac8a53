package io.gradsync.sync.bucket;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
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
import io.gradsync.tasks.kernels.internal.CoreSpread;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The global-norm pass over averaged buckets: sums of squares in float64 and in-place scaling,
 * over parts, each one kernel's array on one replica. Unsharded, the parts are the runs of
 * consecutive buckets of one dtype (buckets lie back to back, so a run is one range; the gaps
 * between views are zero and stay zero), and the norm is replica 0's, since after averaging all
 * replicas hold the same values. Sharded, each replica's parts are its shards of the buckets (only
 * they hold averages), and the norm adds every replica's sum in replica order; with several
 * processes each rank's sum crosses as raw bits in an all-gather, so every rank adds the same
 * numbers in the same order and clips alike.
 *
 * <p>On JVM devices the buckets are host memory and are read and written where they are. On CUDA
 * and OpenCL devices the built-in kernels run on the bucket memory itself through task graphs bound
 * to it: the sum of squares in two stages, {@code sumOfSquaresPartials*} into enough fp64 partials
 * to keep the device busy and {@code sumPartials} adding those down to at most 4096, the only
 * numbers that cross to the host (one stage where a part is small; {@link SquareSlots}, as the ptx
 * backend sums) (added there in fp64, in a fixed order); {@link ClipKernels} for scaling. It is a
 * second pass over the averaged gradients, used where the backend cannot sum the squares in its
 * own averaging pass ({@code cpu} and {@code ptx} do, unsharded: {@link io.gradsync.sync.FusedSumOfSquares}).
 */
final class BucketNorms implements AutoCloseable {
    /** One kernel's array: a run of buckets or a shard on {@code replica}, at most {@link Integer#MAX_VALUE} elements. */
    private record Part(int index, int replica, Gradient view) {
        DType dtype() {
            return view.dtype();
        }

        int count() {
            return Math.toIntExact(view.count());
        }
    }

    private final GradientBuckets buckets;
    private final List<List<Part>> parts;       // [replica]
    private final FloatArray factor = new FloatArray(1);
    private final ExecutionPlan[] normPlans;    // [replica]: every part's sum in one execution; built on first use
    private final DoubleArray[] partials;       // [part]: what the host adds
    private final DoubleArray[] widePartials;   // [part]: the first stage's, on the device only
    private final ExecutionPlan[] scalePlans;   // [replica]
    /** Several processes, sharded: per local replica the all-gather of every rank's sum (made on first use). */
    private SumExchange exchange;

    BucketNorms(GradientBuckets buckets) {
        this.buckets = buckets;
        List<List<Part>> all = new ArrayList<>();
        int index = 0;
        for (int replica = 0; replica < buckets.devices().size(); replica++) {
            List<Part> mine = new ArrayList<>();
            for (Gradient view : buckets.isSharded() ? shards(buckets, replica) : runs(buckets, replica)) {
                mine.add(new Part(index++, replica, view));
            }
            all.add(List.copyOf(mine));
        }
        this.parts = List.copyOf(all);
        this.normPlans = new ExecutionPlan[all.size()];
        this.partials = new DoubleArray[index];
        this.widePartials = new DoubleArray[index];
        this.scalePlans = new ExecutionPlan[all.size()];
    }

    /** Runs of consecutive buckets of one dtype on {@code replica}, each one range. */
    private static List<Gradient> runs(GradientBuckets buckets, int replica) {
        List<Gradient> found = new ArrayList<>();
        List<GradientBuckets.Bucket> all = buckets.buckets();
        int first = 0;
        long count = 0;
        for (int b = 0; b <= all.size(); b++) {
            if (b == all.size() || b > first && (all.get(b).dtype() != all.get(first).dtype()
                    || count + all.get(b).count() > Integer.MAX_VALUE)) {
                found.add(buckets.spanReplicas(first, b - 1).get(replica).gradients().getFirst());
                first = b;
                count = 0;
            }
            if (b < all.size()) {
                count += all.get(b).count();
            }
        }
        return found;
    }

    /** {@code replica}'s non-empty shards, bucket by bucket. */
    private static List<Gradient> shards(GradientBuckets buckets, int replica) {
        List<Gradient> found = new ArrayList<>();
        for (GradientBuckets.Bucket b : buckets.buckets()) {
            Gradient shard = buckets.shard(replica, b.index());
            if (shard.count() > 0) {
                found.add(shard);
            }
        }
        return found;
    }

    /**
     * The sum of squares of all averaged gradients, float64: replica 0's runs, or, sharded, every
     * replica's shards of {@code synchronizer}'s world, added in replica order.
     */
    double sumOfSquares(GradientSynchronizer synchronizer) {
        if (!buckets.isSharded()) {
            return sumOfSquares(parts.getFirst());
        }
        double[] local = new double[parts.size()];
        for (int r = 0; r < local.length; r++) {
            local[r] = sumOfSquares(parts.get(r));
        }
        double[] everyRank = local;
        if (synchronizer.worldSize() > local.length) {
            if (exchange == null) {
                exchange = new SumExchange(buckets, synchronizer.worldSize());
            }
            everyRank = exchange.allGather(synchronizer, local)[0]; // every replica received the same bits
        }
        double sum = 0;
        for (double s : everyRank) {
            sum += s;
        }
        return sum;
    }

    /** One replica's parts (all in its device's memory): on a GPU one execution for all, its partials added part by part. */
    private double sumOfSquares(List<Part> mine) {
        if (mine.isEmpty()) {
            return 0;
        }
        boolean host = mine.getFirst().view().buffer() instanceof JvmBuffer;
        if (!host) {
            normPlan(mine).execute();
        }
        double sum = 0;
        for (Part part : mine) {
            if (host) {
                JvmBuffer jb = (JvmBuffer) part.view().buffer();
                jb.device().synchronize(); // work queued on the device's streams writes this memory
                sum += hostSumOfSquares(part.dtype(), hostView(jb, part.view()), part.count());
            } else {
                DoubleArray p = partials[part.index()];
                for (int i = 0; i < p.getSize(); i++) {
                    sum += p.get(i);
                }
            }
        }
        return sum;
    }

    /** Host memory is summed in cells of this many elements, on every core. */
    private static final int CELL = 1 << 16;

    /**
     * The sum of squares of {@code count} values in host memory: cells summed on every core, added
     * in order, so the bits do not depend on the threads.
     */
    private static double hostSumOfSquares(DType dtype, MemorySegment values, long count) {
        int cells = Math.toIntExact((count + CELL - 1) / CELL);
        if (cells <= 1) {
            return HostAverage.sumOfSquaresFast(dtype, values, count);
        }
        double[] sums = new double[cells];
        CoreSpread.each(cells, (long) CELL * dtype.bytes(), c -> sums[c] = HostAverage.sumOfSquaresFast(dtype,
                values.asSlice((long) c * CELL * dtype.bytes()), Math.min(CELL, count - (long) c * CELL)));
        double sum = 0;
        for (double v : sums) {
            sum += v;
        }
        return sum;
    }

    /** Scales every replica's parts (sharded: only the shards, the averages) by {@code scale}. */
    void scaleAll(float scale) {
        factor.set(0, scale);
        for (List<Part> mine : parts) {
            if (mine.isEmpty()) {
                continue;
            }
            if (!(mine.getFirst().view().buffer() instanceof JvmBuffer)) {
                scalePlan(mine).execute();
                continue;
            }
            for (Part part : mine) {
                JvmBuffer jb = (JvmBuffer) part.view().buffer();
                jb.device().synchronize();
                HostAverage.scale(part.dtype(), hostView(jb, part.view()), 0, part.count(), scale);
            }
        }
    }

    /** One replica's sums of squares, a task or two per part, all partials copied back at the end of one execution. */
    private ExecutionPlan normPlan(List<Part> mine) {
        int replica = mine.getFirst().replica();
        if (normPlans[replica] == null) {
            TaskGraph g = new TaskGraph("norm" + replica);
            List<KernelArray> handles = new ArrayList<>();
            List<DoubleArray> back = new ArrayList<>();
            for (Part part : mine) {
                SquareSlots split = SquareSlots.of(part.count());
                DoubleArray p = new DoubleArray(split.host());
                DoubleArray w = split.wide() > 0 ? new DoubleArray(split.wide()) : null;
                widePartials[part.index()] = w;
                partials[part.index()] = p;
                DoubleArray first = w != null ? w : p;
                KernelArray x = handle(part.dtype(), part.count());
                String squares = "squares" + part.index();
                switch (x) {
                    case FloatArray f -> g.task(squares, ReductionKernels::sumOfSquaresPartials, null, f, first);
                    case Bfloat16Array h -> g.task(squares, ReductionKernels::sumOfSquaresPartialsBf16, null, h, first);
                    case HalfArray h -> g.task(squares, ReductionKernels::sumOfSquaresPartialsF16, null, h, first);
                    default -> throw new IllegalStateException();
                }
                if (w != null) {
                    g.task("partials" + part.index(), ReductionKernels::sumPartials, null, w, p);
                }
                handles.add(x);
                back.add(p);
            }
            g.transferToHost(DataTransferMode.EVERY_EXECUTION, back.toArray(KernelArray[]::new));
            normPlans[replica] = bound(g, handles, mine);
        }
        return normPlans[replica];
    }

    /** One replica's scaling, a task per part. */
    private ExecutionPlan scalePlan(List<Part> mine) {
        int replica = mine.getFirst().replica();
        if (scalePlans[replica] == null) {
            TaskGraph g = new TaskGraph("clip" + replica).transferToDevice(DataTransferMode.EVERY_EXECUTION, factor);
            List<KernelArray> handles = new ArrayList<>();
            for (Part part : mine) {
                KernelArray x = handle(part.dtype(), part.count());
                String scale = "scale" + part.index();
                switch (x) {
                    case FloatArray f -> g.task(scale, ClipKernels::scaleBy, f, factor);
                    case Bfloat16Array h -> g.task(scale, ClipKernels::scaleByBf16, h, factor);
                    case HalfArray h -> g.task(scale, ClipKernels::scaleByF16, h, factor);
                    default -> throw new IllegalStateException();
                }
                handles.add(x);
            }
            scalePlans[replica] = bound(g, handles, mine);
        }
        return scalePlans[replica];
    }

    /** A plan of {@code g} on the parts' device, each part's handle bound to the part's memory. */
    private ExecutionPlan bound(TaskGraph g, List<KernelArray> handles, List<Part> mine) {
        Device d = buckets.devices().get(mine.getFirst().replica());
        ExecutionPlan plan = new ExecutionPlan(g.snapshot()).withDevice(d);
        for (int i = 0; i < mine.size(); i++) {
            Gradient view = mine.get(i).view();
            plan.bind(handles.get(i), d, new DeviceSlice(view.buffer(), view.byteOffset(), handles.get(i).getSize()));
        }
        return plan;
    }

    /** The view's bytes within a JVM device's buffer. */
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
        for (ExecutionPlan[] plans : new ExecutionPlan[][] {normPlans, scalePlans}) {
            for (ExecutionPlan p : plans) {
                if (p != null) {
                    p.close();
                }
            }
        }
        for (DoubleArray[] arrays : new DoubleArray[][] {partials, widePartials}) {
            for (DoubleArray p : arrays) {
                if (p != null) {
                    p.close();
                }
            }
        }
        factor.close();
        if (exchange != null) {
            exchange.close();
        }
    }
}
