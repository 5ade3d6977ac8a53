package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.verify.CollectiveCheck;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The bench's {@code #wrong} for every collective: elements of this process's replicas that differ
 * from the collective's definition after one call on fresh inputs ({@link CollectiveCheck} on
 * each replica's memory, downloaded). The average is checked against
 * float64 ({@link SyncBench#countWrong}); a reduce-scatter's shard likewise, and every element it
 * must leave alone against the replica's own input; an all-gather's shard {@code g} against
 * replica {@code g}'s input, a broadcast against the root's (0), bit for bit.
 */
final class CollectiveWrong {
    private CollectiveWrong() {
    }

    /** @param inputs every replica's inputs in global order ({@link SyncBench#allInputs}) */
    static long countWrong(BenchCollective collective, GradientSynchronizer sync, DType dtype, DType wire, List<? extends Device> devices,
            List<DeviceBuffer> buffers, List<MemorySegment> inputs, long count) {
        if (collective == BenchCollective.ALL_REDUCE) {
            return SyncBench.countWrong(dtype, wire, devices, buffers, inputs, count);
        }
        int world = sync.worldSize();
        int first = world > devices.size() ? sync.rank() : 0;
        long bytes = count * dtype.bytes();
        return IntStream.range(0, devices.size()).mapToLong(r -> {
            Device d = devices.get(r);
            try (HostBuffer out = d.allocateHost(bytes); DeviceStream s = d.createStream()) {
                s.copyToHost(buffers.get(r), 0, out, 0, bytes);
                s.synchronize();
                return wrongIn(collective, dtype, wire, inputs, out.segment(), count, world, first + r);
            }
        }).sum();
    }

    private static long wrongIn(BenchCollective collective, DType dtype, DType wire, List<MemorySegment> inputs, MemorySegment got,
            long count, int world, int g) {
        MemorySegment[] in = inputs.toArray(MemorySegment[]::new);
        return switch (collective) {
            case ALL_REDUCE -> SyncBench.countWrong(dtype, wire, inputs, got, count);
            case REDUCE_SCATTER -> CollectiveCheck.wrongAfterReduceScatter(dtype, wire, in, got, count, g);
            case ALL_GATHER -> CollectiveCheck.wrongAfterAllGather(dtype, in, got, count);
            case BROADCAST -> CollectiveCheck.wrongAfterBroadcast(dtype, in, got, count, 0);
        };
    }
}
