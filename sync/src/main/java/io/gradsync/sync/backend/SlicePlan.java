package io.gradsync.sync.backend;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * How the device backends ({@code ptx}, {@code opencl}) cut a replica set into work: gradients
 * that follow each other directly in one buffer with one dtype on every replica form one
 * <em>run</em>, and each run is split into N contiguous <em>slices</em>, slice i owned (averaged)
 * by device i. Slice bounds are multiples of {@link #ALIGN_ELEMENTS} elements (whole cache lines
 * and coalesced accesses), so the last slices take the remainder and may be shorter or empty.
 * Every run also has a place in a packed layout (host staging, scratch), 256-byte aligned.
 *
 * <p>The sharded collectives ({@link Collective#sharded()}) cut by {@link io.gradsync.sync.Shards}
 * instead ({@link #sharded}): every gradient is a run of its own, slice i its shard i.
 *
 * <p>Made once per replica set and reused while the replicas are equal (same buffers, offsets,
 * counts and dtypes): {@link #madeFor} compares without allocating.
 */
public final class SlicePlan {
    /** Slice bounds are multiples of this many elements. */
    public static final int ALIGN_ELEMENTS = 64;
    /** Runs are cut at this many elements so that a slice always fits a kernel's int count. */
    public static final long MAX_RUN_ELEMENTS = 1L << 30;
    private static final long PACK_ALIGN = 256;

    /**
     * @param first     index of the run's first gradient
     * @param dtype     element type
     * @param count     elements in the run
     * @param buffers   per replica, the buffer holding the run
     * @param offsets   per replica, the byte offset of the run's first element in its buffer
     * @param packed    byte offset of the run in the packed layout
     * @param bounds    n + 1 element bounds: slice i is {@code [bounds[i], bounds[i + 1])}
     */
    public record Run(int first, DType dtype, long count, DeviceBuffer[] buffers, long[] offsets, long packed, long[] bounds) {
        public long bytes() {
            return count * dtype.bytes();
        }

        public long sliceStart(int i) {
            return bounds[i];
        }

        public long sliceCount(int i) {
            return bounds[i + 1] - bounds[i];
        }

        /** Byte offset of slice {@code i}'s first element in replica {@code r}'s buffer. */
        public long sliceOffset(int r, int i) {
            return offsets[r] + bounds[i] * dtype.bytes();
        }

        /** Byte offset of slice {@code i}'s first element in the packed layout. */
        public long packedSliceOffset(int i) {
            return packed + bounds[i] * dtype.bytes();
        }
    }

    private final List<Replica> key;
    private final boolean byShards;
    private final List<Run> runs;
    private final long packedBytes;
    private final long replicaBytes;

    private SlicePlan(List<Replica> key, boolean byShards, List<Run> runs, long packedBytes, long replicaBytes) {
        this.key = key;
        this.byShards = byShards;
        this.runs = runs;
        this.packedBytes = packedBytes;
        this.replicaBytes = replicaBytes;
    }

    public List<Run> runs() {
        return runs;
    }

    /** Bytes of the packed layout: every run, aligned. */
    public long packedBytes() {
        return packedBytes;
    }

    /** Bytes of gradients per replica. */
    public long replicaBytes() {
        return replicaBytes;
    }

    /** True when {@code replicas} equal the ones this plan was made for (records compare by value, buffers by identity). */
    public boolean madeFor(List<Replica> replicas) {
        return key.equals(replicas);
    }

    /** True when this is the plan {@link #forCollective} makes for {@code replicas} and {@code op}. */
    public boolean madeFor(List<Replica> replicas, Collective op) {
        return byShards == op.sharded() && key.equals(replicas);
    }

    /** The plan {@code op} moves by: {@link #sharded} for the sharded collectives, else {@link #of}. */
    public static SlicePlan forCollective(List<Replica> replicas, Collective op) {
        return op.sharded() ? sharded(replicas) : of(replicas);
    }

    /**
     * Every gradient a run of its own (pieces of {@link #MAX_RUN_ELEMENTS} where longer), and slice i
     * of a run the part of shard i ({@link io.gradsync.sync.Shards#range}) in it.
     */
    public static SlicePlan sharded(List<Replica> replicas) {
        int n = replicas.size();
        List<Gradient> first = replicas.getFirst().gradients();
        List<Run> runs = new ArrayList<>();
        long packed = 0;
        long total = 0;
        for (int g = 0; g < first.size(); g++) {
            Gradient head = first.get(g);
            total += head.byteSize();
            long shard = (head.count() + n - 1) / n;
            for (long done = 0; done < head.count(); done += MAX_RUN_ELEMENTS) {
                long c = Math.min(MAX_RUN_ELEMENTS, head.count() - done);
                long[] bounds = new long[n + 1];
                for (int i = 0; i <= n; i++) {
                    bounds[i] = Math.clamp(Math.min(head.count(), i * shard) - done, 0, c);
                }
                runs.add(run(replicas, g, done, c, packed, bounds));
                packed = align(packed + c * head.dtype().bytes());
            }
        }
        return new SlicePlan(List.copyOf(replicas), true, List.copyOf(runs), Math.max(packed, PACK_ALIGN), total);
    }

    /** The plan for {@code replicas}: gradients that follow each other in one buffer share one run. */
    public static SlicePlan of(List<Replica> replicas) {
        int n = replicas.size();
        List<Gradient> first = replicas.getFirst().gradients();
        List<Run> runs = new ArrayList<>();
        long packed = 0;
        long total = 0;
        int g = 0;
        while (g < first.size()) {
            Gradient head = first.get(g);
            total += head.byteSize();
            if (head.count() == 0) {
                g++;
                continue;
            }
            long count = head.count();
            int last = g;
            while (last + 1 < first.size() && follows(replicas, last, last + 1)
                    && count + first.get(last + 1).count() <= MAX_RUN_ELEMENTS) {
                last++;
                count += first.get(last).count();
                total += first.get(last).byteSize();
            }
            // a gradient longer than MAX_RUN_ELEMENTS becomes several runs
            for (long done = 0; done < count; done += MAX_RUN_ELEMENTS) {
                long c = Math.min(MAX_RUN_ELEMENTS, count - done);
                runs.add(run(replicas, g, done, c, packed, bounds(c, n)));
                packed = align(packed + c * head.dtype().bytes());
            }
            g = last + 1;
        }
        return new SlicePlan(List.copyOf(replicas), false, List.copyOf(runs), Math.max(packed, PACK_ALIGN), total);
    }

    /** The run of {@code count} elements from element {@code done} of gradient {@code g} on, on every replica. */
    private static Run run(List<Replica> replicas, int g, long done, long count, long packed, long[] bounds) {
        int n = replicas.size();
        DeviceBuffer[] buffers = new DeviceBuffer[n];
        long[] offsets = new long[n];
        for (int r = 0; r < n; r++) {
            Gradient h = replicas.get(r).gradients().get(g);
            buffers[r] = h.buffer();
            offsets[r] = h.byteOffset() + done * h.dtype().bytes();
        }
        return new Run(g, replicas.getFirst().gradients().get(g).dtype(), count, buffers, offsets, packed, bounds);
    }

    /** Gradient {@code b} starts where {@code a} ends, in the same buffer, with the same dtype, on every replica. */
    private static boolean follows(List<Replica> replicas, int a, int b) {
        for (Replica r : replicas) {
            Gradient ga = r.gradients().get(a);
            Gradient gb = r.gradients().get(b);
            if (gb.count() == 0 || ga.buffer() != gb.buffer() || ga.dtype() != gb.dtype()
                    || ga.byteOffset() + ga.byteSize() != gb.byteOffset()) {
                return false;
            }
        }
        return true;
    }

    /** N contiguous slices of whole {@link #ALIGN_ELEMENTS} blocks; the remainder shortens the last ones. */
    public static long[] bounds(long count, int n) {
        long per = (count + n - 1) / n;
        per = (per + ALIGN_ELEMENTS - 1) / ALIGN_ELEMENTS * ALIGN_ELEMENTS;
        long[] bounds = new long[n + 1];
        for (int i = 0; i <= n; i++) {
            bounds[i] = Math.min(count, i * per);
        }
        return bounds;
    }

    public static long align(long bytes) {
        return (bytes + PACK_ALIGN - 1) / PACK_ALIGN * PACK_ALIGN;
    }

    /** fp64 partials added down to fewer slots: the second stage of a large sum of squares. */
    public static final KernelSpec SUM_PARTIALS = BuiltinKernels.byName("sumPartials").orElseThrow();

    /** The float64 sums of squares into partial slots, for {@code dtype}. */
    public static KernelSpec sumOfSquaresKernel(DType dtype) {
        String name = switch (dtype) {
            case FP32 -> "sumOfSquaresPartials";
            case BF16 -> "sumOfSquaresPartialsBf16";
            case FP16 -> "sumOfSquaresPartialsF16";
        };
        return BuiltinKernels.byName(name).orElseThrow();
    }

    /** The element-wise copy for {@code dtype}. */
    public static KernelSpec copyKernel(DType dtype) {
        return BuiltinKernels.copy(dtype.bytes(), dtype == DType.BF16);
    }

    /** The fused average of {@code n} inputs for {@code dtype} written into every input ({@code averageInPlace<n>}). */
    public static KernelSpec inPlaceAverageKernel(DType dtype, int n) {
        String name = "averageInPlace" + n + switch (dtype) {
            case FP32 -> "";
            case BF16 -> "Bf16";
            case FP16 -> "F16";
        };
        return BuiltinKernels.byName(name).orElseThrow(() -> new IllegalArgumentException("no in-place average for " + n + " inputs (2..8)"));
    }

    /** Rounds fp32 to the 16-bit {@code wire} type, to nearest even ({@code f32ToBf16}, {@code f32ToF16}). */
    public static KernelSpec narrowKernel(DType wire) {
        return BuiltinKernels.byName(wire == DType.BF16 ? "f32ToBf16" : "f32ToF16").orElseThrow();
    }

    /** Widens the 16-bit {@code wire} type to fp32, exactly ({@code bf16ToF32}, {@code f16ToF32}). */
    public static KernelSpec widenKernel(DType wire) {
        return BuiltinKernels.byName(wire == DType.BF16 ? "bf16ToF32" : "f16ToF32").orElseThrow();
    }

    /** The fused average of {@code n} inputs for {@code dtype}, accumulating in fp32. */
    public static KernelSpec averageKernel(DType dtype, int n) {
        return switch (dtype) {
            case FP32 -> BuiltinKernels.average(n);
            case BF16 -> BuiltinKernels.averageBf16(n);
            case FP16 -> BuiltinKernels.averageF16(n);
        };
    }
}
