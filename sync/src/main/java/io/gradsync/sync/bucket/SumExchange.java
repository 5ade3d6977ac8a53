package io.gradsync.sync.bucket;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.backend.Resources;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Sharded buckets over several processes: every replica's float64 sum of squares of its shards,
 * given to every replica bit for bit by an all-gather in which each replica's shard is its sum's
 * eight bytes (as two fp32 elements: an all-gather copies, on every backend and wire), so that
 * every rank adds the same numbers in the same order and all clip alike.
 *
 * <p>Thread-safety: used under the {@link BucketSync}'s lock only.
 */
final class SumExchange implements AutoCloseable {
    private final int world;
    private final int[] global;
    private final DeviceBuffer[] buffers;
    private final HostBuffer[] hosts;
    private final DeviceStream[] streams;
    private final List<Replica> replicas = new ArrayList<>();

    /** Buffers on every local device of {@code buckets} for a world of {@code worldSize} replicas. */
    SumExchange(GradientBuckets buckets, int worldSize) {
        List<? extends Device> devices = buckets.devices();
        int n = devices.size();
        this.world = worldSize;
        this.global = new int[n];
        this.buffers = new DeviceBuffer[n];
        this.hosts = new HostBuffer[n];
        this.streams = new DeviceStream[n];
        try {
            for (int r = 0; r < n; r++) {
                global[r] = buckets.globalIndex(r);
                buffers[r] = devices.get(r).allocate(bytes());
                hosts[r] = devices.get(r).allocateHost(bytes());
                streams[r] = devices.get(r).createStream();
                replicas.add(Replica.on(devices.get(r)).stream(streams[r])
                        .add(new Gradient("sumOfSquares", buffers[r], 0, 2L * world, DType.FP32)).build());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private long bytes() {
        return (long) Double.BYTES * world;
    }

    /**
     * Every replica's value of {@code local} (one per local replica, in device order) gathered
     * across the world: per local replica, the world's values in global replica order.
     */
    double[][] allGather(GradientSynchronizer synchronizer, double[] local) {
        for (int r = 0; r < local.length; r++) {
            hosts[r].segment().fill((byte) 0);
            hosts[r].segment().set(ValueLayout.JAVA_DOUBLE, (long) Double.BYTES * global[r], local[r]);
            streams[r].copyFromHost(hosts[r], 0, buffers[r], 0, bytes());
        }
        synchronizer.allGather(replicas); // after the copies on the replicas' streams, and they wait for it
        double[][] received = new double[local.length][world];
        for (int r = 0; r < local.length; r++) {
            streams[r].copyToHost(buffers[r], 0, hosts[r], 0, bytes());
            streams[r].synchronize();
            for (int g = 0; g < world; g++) {
                received[r][g] = hosts[r].segment().get(ValueLayout.JAVA_DOUBLE, (long) Double.BYTES * g);
            }
        }
        return received;
    }

    @Override
    public void close() {
        for (int r = 0; r < buffers.length; r++) {
            if (streams[r] != null) {
                try {
                    streams[r].synchronize();
                } catch (RuntimeException e) {
                    // a failed stream: its buffers are freed all the same
                }
            }
            Resources.closeQuietly(streams[r]);
            Resources.closeQuietly(buffers[r]);
            Resources.closeQuietly(hosts[r]);
        }
    }
}
