package io.gradsync.sync.backend.nccl;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.nccl.NcclDataType;
import io.gradsync.sync.backend.Collective;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.device.DeviceBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The nccl backend's per-call plan: what a replica set turns into, cached while the caller passes
 * the same replica objects: its runs of gradients ({@link Calls}), merged where gradients lie back
 * to back in one buffer with one dtype on every replica, or one per gradient; the NCCL calls each
 * collective makes of them ({@link NcclCalls}, made on first use); the element total and the
 * layout and call hashes the ranks compare ({@link NcclLayoutCheck}); the byte count for the stats;
 * and the descriptions that failure messages name.
 *
 * <p>Thread-safety: the runs are immutable once made; the collectives' calls are made and cached
 * under the synchronizer's lock.
 */
final class NcclPlan {
    static NcclDataType ncclType(DType dtype) {
        return switch (dtype) {
            case FP32 -> NcclDataType.FLOAT32;
            case BF16 -> NcclDataType.BFLOAT16;
            case FP16 -> NcclDataType.FLOAT16;
        };
    }

    /** Runs of gradients: per run an element count and type, per replica and run the first element's address. */
    record Calls(long[][] address, long[] count, NcclDataType[] type) {
    }

    final Replica[] key;
    final Calls merged;
    final Calls each;
    final long total;
    final long layoutHash;
    final long callHash;
    final long bytes;
    private final List<Gradient> gradients;
    private final Map<CallsKey, NcclCalls> made = new HashMap<>();

    private NcclPlan(Replica[] key, Calls merged, Calls each, long total, long layoutHash, long callHash,
            List<Gradient> gradients) {
        this.key = key;
        this.merged = merged;
        this.each = each;
        this.total = total;
        this.layoutHash = layoutHash;
        this.callHash = callHash;
        this.gradients = gradients;
        this.bytes = gradients.stream().mapToLong(Gradient::byteSize).sum();
    }

    private record CallsKey(Collective collective, boolean merged) {
    }

    /**
     * The NCCL calls of {@code collective} on these replicas, made once ({@link NcclCalls#of}); a
     * synchronizer's plans always see the same {@code firstRank} and {@code worldSize}.
     */
    NcclCalls calls(Collective collective, boolean merged, int firstRank, int worldSize) {
        CallsKey key = new CallsKey(collective, merged && !collective.sharded());
        NcclCalls calls = made.get(key);
        if (calls == null) {
            calls = NcclCalls.of(this, collective, key.merged(), firstRank, worldSize);
            made.put(key, calls);
        }
        return calls;
    }

    boolean madeFor(List<Replica> replicas) {
        if (replicas.size() != key.length) {
            return false;
        }
        for (int r = 0; r < key.length; r++) {
            if (replicas.get(r) != key[r]) {
                return false;
            }
        }
        return true;
    }

    /** @param address where a gradient's first element is on its device (CUDA: {@link #cudaAddress}) */
    static NcclPlan of(List<Replica> replicas, java.util.function.ToLongFunction<Gradient> address) {
        int n = replicas.size();
        List<Gradient> first = replicas.getFirst().gradients();
        int g = first.size();
        long[][] addresses = new long[n][g];
        for (int r = 0; r < n; r++) {
            List<Gradient> grads = replicas.get(r).gradients();
            for (int i = 0; i < g; i++) {
                addresses[r][i] = address.applyAsLong(grads.get(i));
            }
        }
        // Calls: skip empty gradients; merge a gradient into the previous call where it follows
        // it directly in the same buffer, with the same dtype, on every replica.
        List<long[]> runs = new ArrayList<>(); // {first gradient, elements}
        List<Integer> eachIndex = new ArrayList<>();
        int previous = -1;
        for (int i = 0; i < g; i++) {
            Gradient gi = first.get(i);
            if (gi.count() == 0) {
                continue;
            }
            eachIndex.add(i);
            if (previous >= 0 && follows(replicas, previous, i)) {
                runs.getLast()[1] += gi.count();
            } else {
                runs.add(new long[] {i, gi.count()});
            }
            previous = i;
        }
        Calls merged = calls(replicas, addresses, runs.stream().mapToInt(a -> (int) a[0]).toArray(),
                runs.stream().mapToLong(a -> a[1]).toArray());
        int[] eachFirst = eachIndex.stream().mapToInt(Integer::intValue).toArray();
        long[] eachCount = Arrays.stream(eachFirst).mapToLong(i -> first.get(i).count()).toArray();
        Calls each = calls(replicas, addresses, eachFirst, eachCount);
        long total = 0;
        long layout = 0xcbf29ce484222325L; // FNV-1a over names, counts, dtypes, in order
        for (Gradient gr : first) {
            total += gr.count();
            for (int c = 0; c < gr.name().length(); c++) {
                layout = fnv(layout, gr.name().charAt(c));
            }
            layout = fnv(fnv(layout, gr.count()), gr.dtype().ordinal() + 1);
        }
        long callHash = 0xcbf29ce484222325L;
        for (int c = 0; c < merged.count.length; c++) {
            callHash = fnv(fnv(callHash, merged.count[c]), merged.type[c].ncclValue());
        }
        return new NcclPlan(replicas.toArray(Replica[]::new), merged, each, total, layout, callHash, first);
    }

    private static Calls calls(List<Replica> replicas, long[][] addresses, int[] firstGradient, long[] counts) {
        List<Gradient> first = replicas.getFirst().gradients();
        long[][] address = new long[replicas.size()][firstGradient.length];
        NcclDataType[] type = new NcclDataType[firstGradient.length];
        for (int c = 0; c < firstGradient.length; c++) {
            type[c] = ncclType(first.get(firstGradient[c]).dtype());
            for (int r = 0; r < replicas.size(); r++) {
                address[r][c] = addresses[r][firstGradient[c]];
            }
        }
        return new Calls(address, counts, type);
    }

    private static boolean follows(List<Replica> replicas, int previous, int next) {
        for (Replica replica : replicas) {
            Gradient a = replica.gradients().get(previous);
            Gradient b = replica.gradients().get(next);
            if (a.buffer() != b.buffer() || a.dtype() != b.dtype() || a.byteOffset() + a.byteSize() != b.byteOffset()) {
                return false;
            }
        }
        return true;
    }

    static long cudaAddress(Gradient g) {
        DeviceBuffer b = g.buffer();
        if (!(b instanceof CudaBuffer cuda)) {
            throw new IllegalArgumentException("gradient '" + g.name() + "' is in a "
                    + b.device().runtime().label() + " buffer; backend nccl needs CUDA buffers");
        }
        return cuda.address() + g.byteOffset();
    }

    private static long fnv(long h, long value) {
        for (int i = 0; i < 8; i++) {
            h ^= (value >>> (8 * i)) & 0xFF;
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** {@code "the all-reduce of 3 gradient(s), ..."}: what a failure message names. */
    String describe(String collective, int calls) {
        return String.format(Locale.ROOT, "the %s of %d gradient(s), %d elements, %.1f MiB per replica in %d call(s)",
                collective, gradients.size(), total, bytes / 1048576.0, calls);
    }

    /** This rank's gradients, for the mismatch message: count, total, then the first few. */
    String layout() {
        StringBuilder sb = new StringBuilder().append(gradients.size()).append(" gradient(s), ").append(total)
                .append(" elements: ");
        int shown = Math.min(8, gradients.size());
        for (int i = 0; i < shown; i++) {
            Gradient gr = gradients.get(i);
            sb.append(i == 0 ? "" : ", ").append('\'').append(gr.name()).append("' ").append(gr.dtype().label())
                    .append(" x ").append(gr.count());
        }
        if (shown < gradients.size()) {
            sb.append(", ... (").append(gradients.size() - shown).append(" more)");
        }
        return sb.toString();
    }
}
