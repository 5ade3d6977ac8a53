package io.gradsync.sync.bucket;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.Shards;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The gradients of a model's parameters packed into flat buckets, so that one collective serves
 * many tensors and packing copies nothing: each parameter's gradient is a {@link Gradient} view
 * into its bucket, which backward writes directly. Each replica's buckets lie back to back in one
 * device buffer, in bucket order, so that buckets ready together can also be averaged as one
 * range ({@link #spanReplicas}).
 *
 * <p>Parameters are assigned to buckets in <em>reverse</em> registration order, the order
 * backward produces them, so the first bucket fills (and can start its all-reduce) while earlier
 * layers are still being differentiated. A bucket holds at most {@link Builder#bucketBytes} bytes
 * (default 25 MiB) and one dtype; a parameter larger than that gets a bucket of its own. Views
 * start on {@value #ALIGN_BYTES}-byte boundaries; the gaps are zero and stay zero under averaging.
 *
 * <p><b>Sharded</b> ({@link Builder#sharded}, the ZeRO-2 pattern): each bucket is padded to a
 * multiple of the world size times {@value #ALIGN_BYTES} bytes, so that every replica's shard of it
 * ({@link #shard}, {@link Shards#range} of the bucket's elements) starts aligned and all shards are
 * the same size; {@link BucketSync} then reduce-scatters the buckets instead of averaging them, and
 * {@link #sameLayout()} gives the parameters a bucket set whose shards line up with these.
 *
 * <p>Buffers are zeroed on allocation and freed by {@link #close()}.
 *
 * <p>Thread-safety: its layout is fixed at build, so lookups may be called from any thread at once; {@link #zero()} and {@link #close()} must not race with work on the buckets.
 */
public final class GradientBuckets implements AutoCloseable {
    /** PyTorch DDP's default: big enough to amortize a collective's latency, small enough to overlap. */
    public static final long DEFAULT_BUCKET_BYTES = 25L << 20;
    /** View alignment: coalesced device access and vector loads for every dtype. */
    public static final int ALIGN_BYTES = 256;

    /** One bucket: its dtype, its size in bytes and its parameters in bucket (backward) order. */
    public record Bucket(int index, DType dtype, long byteSize, List<String> parameters) {
        public Bucket {
            parameters = List.copyOf(parameters);
        }

        /** Elements the bucket's collective averages, gaps included. */
        public long count() {
            return byteSize / dtype.bytes();
        }
    }

    private record Slot(int bucket, long byteOffset, long count, DType dtype, int registration) {
    }

    private final List<Device> devices;
    private final List<String> parameters;
    private final Map<String, Slot> slots;
    private final List<Bucket> buckets;
    private final DeviceBuffer[] buffers; // [replica]: every bucket, back to back
    private final long[] bucketOffsets;   // [bucket]: bytes into each replica's buffer
    private final long totalBytes;
    private final List<List<Replica>> bucketReplicas;
    /** Ranges asked for before, by (first, last): a step's ranges repeat every step. */
    private final Map<Long, List<Replica>> spans = new java.util.concurrent.ConcurrentHashMap<>();
    /** Sharded: the replicas the shards are cut over, and this process's first one's global index; 0 and 0 when not sharded. */
    private final int shardWorld;
    private final int firstReplica;
    private boolean closed;

    private GradientBuckets(List<Device> devices, List<String> parameters, Map<String, Slot> slots, List<Bucket> buckets,
            int shardWorld, int firstReplica) {
        this.devices = devices;
        this.parameters = parameters;
        this.slots = slots;
        this.buckets = buckets;
        this.shardWorld = shardWorld;
        this.firstReplica = firstReplica;
        this.bucketOffsets = new long[buckets.size()];
        long at = 0;
        for (Bucket b : buckets) {
            bucketOffsets[b.index()] = at; // bucket sizes are whole ALIGN_BYTES: every bucket starts aligned
            at += b.byteSize();
        }
        this.totalBytes = at;
        this.buffers = new DeviceBuffer[devices.size()];
        try {
            for (int r = 0; r < devices.size(); r++) {
                Device d = devices.get(r);
                buffers[r] = d.allocate(totalBytes);
                try (DeviceStream s = d.createStream()) {
                    s.fill32(buffers[r], 0, totalBytes, 0);
                    s.synchronize();
                }
            }
        } catch (RuntimeException e) {
            freeBuffers();
            throw e;
        }
        List<List<Replica>> replicas = new ArrayList<>();
        for (Bucket b : buckets) {
            replicas.add(span(b.index(), b.index()));
        }
        this.bucketReplicas = List.copyOf(replicas);
    }

    public static Builder builder(List<? extends Device> devices) {
        return new Builder(devices);
    }

    /** Registers parameters in model order, then allocates the buckets on every device. */
    public static final class Builder {
        private final List<Device> devices;
        private final LinkedHashMap<String, long[]> counts = new LinkedHashMap<>();
        private final Map<String, DType> dtypes = new HashMap<>();
        private long bucketBytes = DEFAULT_BUCKET_BYTES;
        private int shardWorld;
        private int firstReplica;

        private Builder(List<? extends Device> devices) {
            if (devices == null || devices.isEmpty()) {
                throw new IllegalArgumentException("devices: at least one device is needed");
            }
            this.devices = List.copyOf(devices);
        }

        /** Largest bucket in bytes (a single larger parameter still gets a bucket of its own). */
        public Builder bucketBytes(long bytes) {
            if (bytes < ALIGN_BYTES) {
                throw new IllegalArgumentException("bucket bytes must be >= " + ALIGN_BYTES + ", got " + bytes);
            }
            this.bucketBytes = bytes;
            return this;
        }

        /**
         * Shards every bucket over {@code worldSize} replicas, of which this process holds the
         * devices' replicas from global index {@code firstReplica} on (0 in one process, the rank
         * with one process per GPU).
         *
         * @throws IllegalArgumentException where this process's replicas do not fit in the world
         */
        public Builder sharded(int worldSize, int firstReplica) {
            if (worldSize < 1 || firstReplica < 0 || firstReplica + devices.size() > worldSize) {
                throw new IllegalArgumentException("sharded: " + devices.size() + " local replica(s) from global index " + firstReplica
                        + " do not fit in a world of " + worldSize);
            }
            this.shardWorld = worldSize;
            this.firstReplica = firstReplica;
            return this;
        }

        /** {@link #sharded(int, int)} over the replicas {@code synchronizer} works on: its world size, from its rank. */
        public Builder sharded(GradientSynchronizer synchronizer) {
            return sharded(synchronizer.worldSize(), synchronizer.rank());
        }

        /** Registers a parameter with {@code count} gradient elements of {@code dtype}; names are unique. */
        public Builder add(String name, long count, DType dtype) {
            Objects.requireNonNull(name, "parameter name");
            Objects.requireNonNull(dtype, "dtype of parameter '" + name + "'");
            if (name.isBlank()) {
                throw new IllegalArgumentException("parameter name must not be blank");
            }
            if (count <= 0) {
                throw new IllegalArgumentException("parameter '" + name + "': count must be > 0, got " + count);
            }
            if (counts.containsKey(name)) {
                throw new IllegalArgumentException("parameter '" + name + "' is registered twice");
            }
            counts.put(name, new long[] {count});
            dtypes.put(name, dtype);
            return this;
        }

        public GradientBuckets build() {
            if (counts.isEmpty()) {
                throw new IllegalStateException("no parameters registered");
            }
            List<String> order = new ArrayList<>(counts.keySet());
            long pad = ALIGN_BYTES * (long) Math.max(1, shardWorld); // sharded: whole aligned shards, all of one size
            Map<String, Slot> slots = new HashMap<>();
            List<Bucket> buckets = new ArrayList<>();
            List<String> current = new ArrayList<>();
            DType currentType = null;
            long used = 0;
            for (int i = order.size() - 1; i >= 0; i--) { // reverse registration = backward order
                String name = order.get(i);
                DType t = dtypes.get(name);
                long bytes = counts.get(name)[0] * t.bytes();
                long start = align(used);
                if (!current.isEmpty() && (t != currentType || start + bytes > bucketBytes)) {
                    buckets.add(new Bucket(buckets.size(), currentType, align(used, pad), current));
                    current = new ArrayList<>();
                    start = 0;
                }
                currentType = t;
                slots.put(name, new Slot(buckets.size(), start, counts.get(name)[0], t, i));
                current.add(name);
                used = start + bytes;
            }
            buckets.add(new Bucket(buckets.size(), currentType, align(used, pad), current));
            return new GradientBuckets(devices, List.copyOf(order), Map.copyOf(slots), List.copyOf(buckets), shardWorld, firstReplica);
        }

        private static long align(long bytes) {
            return align(bytes, ALIGN_BYTES);
        }

        private static long align(long bytes, long to) {
            return (bytes + to - 1) / to * to;
        }
    }

    /** True when built {@link Builder#sharded}. */
    public boolean isSharded() {
        return shardWorld > 0;
    }

    /** Sharded: the replicas the shards are cut over. */
    public int shardWorldSize() {
        requireSharded("shardWorldSize");
        return shardWorld;
    }

    /** Sharded: the global index of this process's replica {@code replica}. */
    public int globalIndex(int replica) {
        Objects.checkIndex(replica, devices.size());
        return firstReplica + replica;
    }

    /**
     * Sharded: the elements of bucket {@code bucket} that replica {@code replica} (of this
     * process) owns: {@link Shards#range} of the bucket's {@link Bucket#count()} over the world, at its
     * global index.
     */
    public Shards shardRange(int replica, int bucket) {
        requireSharded("shardRange");
        Objects.checkIndex(bucket, buckets.size());
        return Shards.range(buckets.get(bucket).count(), shardWorld, globalIndex(replica));
    }

    /**
     * Sharded: replica {@code replica}'s shard of bucket {@code bucket}, a view into its buffer: what
     * its optimizer steps once the bucket is reduce-scattered. Parameters lie in it at the offsets
     * {@link #gradient} gives minus {@link #bucketGradient}'s.
     */
    public Gradient shard(int replica, int bucket) {
        Shards s = shardRange(replica, bucket);
        checkOpen();
        Bucket b = buckets.get(bucket);
        return new Gradient("bucket" + bucket + ".shard" + globalIndex(replica), buffers[replica],
                bucketOffsets[bucket] + s.offset() * b.dtype().bytes(), s.count(), b.dtype());
    }

    /**
     * A new bucket set with this one's layout (devices, parameters, buckets, offsets, shards),
     * zeroed: for the parameters of sharded training, whose shards then line up element for element
     * with the gradients', so that each replica steps its shard and {@link BucketSync#allGather}
     * gathers the parameters.
     */
    public GradientBuckets sameLayout() {
        checkOpen();
        return new GradientBuckets(devices, parameters, slots, buckets, shardWorld, firstReplica);
    }

    /** True when {@code other} has this layout: the same devices, parameters, buckets and shards. */
    public boolean hasLayoutOf(GradientBuckets other) {
        return other.devices.equals(devices) && other.parameters.equals(parameters) && other.slots.equals(slots)
                && other.buckets.equals(buckets) && other.shardWorld == shardWorld && other.firstReplica == firstReplica;
    }

    private void requireSharded(String what) {
        if (shardWorld == 0) {
            throw new IllegalStateException(what + ": these buckets are not sharded; build them with GradientBuckets.Builder.sharded");
        }
    }

    /** The devices, one replica each, in replica order. */
    public List<Device> devices() {
        return devices;
    }

    /** Parameter names in registration order. */
    public List<String> parameters() {
        return parameters;
    }

    /** Buckets in the order backward fills them. */
    public List<Bucket> buckets() {
        return buckets;
    }

    /** The bucket holding {@code parameter}. */
    public Bucket bucketOf(String parameter) {
        return buckets.get(slot(parameter).bucket());
    }

    /** {@code parameter}'s position in registration order ({@link #parameters()}). */
    public int indexOf(String parameter) {
        return slot(parameter).registration();
    }

    /** The index of the bucket holding the parameter registered at {@code index}. */
    int bucketIndexOf(int index) {
        return slots.get(parameters.get(index)).bucket();
    }

    /** Replica {@code replica}'s gradient of {@code parameter}: a view into its bucket. */
    public Gradient gradient(int replica, String parameter) {
        Slot s = slot(parameter);
        checkOpen();
        Objects.checkIndex(replica, devices.size());
        return new Gradient(parameter, buffers[replica], bucketOffsets[s.bucket()] + s.byteOffset(), s.count(), s.dtype());
    }

    /** Replica {@code replica}'s whole bucket {@code bucket}, gaps included: a view into the replica's buffer. */
    public Gradient bucketGradient(int replica, int bucket) {
        checkOpen();
        Objects.checkIndex(replica, devices.size());
        Objects.checkIndex(bucket, buckets.size());
        Bucket b = buckets.get(bucket);
        return new Gradient("bucket" + bucket, buffers[replica], bucketOffsets[bucket], b.count(), b.dtype());
    }

    /** One replica per device whose one gradient spans bucket {@code bucket}: what one collective averages. */
    public List<Replica> bucketReplicas(int bucket) {
        checkOpen();
        return bucketReplicas.get(bucket);
    }

    /**
     * One replica per device whose one gradient spans buckets {@code first} to {@code last}
     * (inclusive), which lie back to back: buckets ready together averaged as one range, exactly
     * as each on its own would be (averaging is element-wise; the gaps are zero and stay zero).
     *
     * @throws IllegalArgumentException when the range is empty or out of bounds, or its buckets do
     *                                  not all have one dtype
     */
    public List<Replica> spanReplicas(int first, int last) {
        checkOpen();
        if (first < 0 || last >= buckets.size() || first > last) {
            throw new IllegalArgumentException("bucket range " + first + ".." + last + " is not within 0.."
                    + (buckets.size() - 1));
        }
        if (first == last) {
            return bucketReplicas.get(first);
        }
        return spans.computeIfAbsent(((long) first << 32) | last, k -> span(first, last));
    }

    private List<Replica> span(int first, int last) {
        DType dtype = buckets.get(first).dtype();
        long bytes = 0;
        for (int b = first; b <= last; b++) {
            if (buckets.get(b).dtype() != dtype) {
                throw new IllegalArgumentException("buckets " + first + ".." + last + " mix " + dtype + " and "
                        + buckets.get(b).dtype() + "; one range holds one dtype");
            }
            bytes += buckets.get(b).byteSize();
        }
        String name = first == last ? "bucket" + first : "buckets" + first + "-" + last;
        List<Replica> perDevice = new ArrayList<>();
        for (int r = 0; r < devices.size(); r++) {
            perDevice.add(Replica.on(devices.get(r))
                    .add(new Gradient(name, buffers[r], bucketOffsets[first], bytes / dtype.bytes(), dtype)).build());
        }
        return List.copyOf(perDevice);
    }

    /**
     * One replica per device listing every parameter as its own gradient (views, registration
     * order): for {@code GradientSynchronizer.synchronize} one tensor at a time, and for checking
     * that buckets give the same result.
     */
    public List<Replica> parameterReplicas() {
        List<Replica> out = new ArrayList<>();
        for (int r = 0; r < devices.size(); r++) {
            Replica.Builder b = Replica.on(devices.get(r));
            for (String p : parameters) {
                b.add(gradient(r, p));
            }
            out.add(b.build());
        }
        return out;
    }

    /** Zeroes every bucket on every device (gaps included) and waits. */
    public void zero() {
        checkOpen();
        for (int r = 0; r < devices.size(); r++) {
            try (DeviceStream s = devices.get(r).createStream()) {
                s.fill32(buffers[r], 0, totalBytes, 0);
                s.synchronize();
            }
        }
    }

    private Slot slot(String parameter) {
        Slot s = parameter == null ? null : slots.get(parameter); // the map's own get(null) would throw a bare NullPointerException
        if (s == null) {
            throw new IllegalArgumentException("unknown parameter '" + parameter + "'; registered: " + summary(parameters));
        }
        return s;
    }

    static String summary(List<String> names) {
        return names.size() <= 20 ? names.toString()
                : names.subList(0, 20) + " and " + (names.size() - 20) + " more";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("gradient buckets are closed");
        }
    }


    private void freeBuffers() {
        for (DeviceBuffer b : buffers) {
            if (b != null && !b.isClosed()) {
                b.close();
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            freeBuffers();
        }
    }
}
