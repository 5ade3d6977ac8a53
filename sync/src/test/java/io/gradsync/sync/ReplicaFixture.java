package io.gradsync.sync;

import io.gradsync.sync.verify.CollectiveCheck;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.sync.verify.RandomGradients;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Replicas of a model on any devices: one buffer per device holding every gradient as a view,
 * with guard bytes before, between and after the views that no synchronizer may touch. Inputs
 * are fresh random values, kept on the host to check the average against float64.
 */
public final class ReplicaFixture implements AutoCloseable {
    public static final int GUARD_BYTES = 64;
    static final int GUARD = 0x7FC0DEAD; // a NaN pattern: a stray write or read of it shows

    public final List<? extends Device> devices;
    public final long[] counts;
    public final DType[] dtypes;
    public final long[] offsets;
    public final long bufferBytes;
    public final List<DeviceBuffer> buffers = new ArrayList<>();
    public final List<HostBuffer> inputs = new ArrayList<>();
    public final List<Replica> replicas = new ArrayList<>();

    public ReplicaFixture(List<? extends Device> devices, long[] counts, DType[] dtypes, long seed) {
        this.devices = devices;
        this.counts = counts.clone();
        this.dtypes = dtypes.clone();
        this.offsets = new long[counts.length];
        long at = GUARD_BYTES;
        for (int g = 0; g < counts.length; g++) {
            offsets[g] = at;
            at += align(counts[g] * dtypes[g].bytes()) + GUARD_BYTES;
        }
        this.bufferBytes = at;
        SplittableRandom random = new SplittableRandom(seed);
        for (Device d : devices) {
            DeviceBuffer buffer = d.allocate(bufferBytes);
            HostBuffer host = d.allocateHost(bufferBytes);
            host.segment().fill((byte) 0);
            for (long i = 0; i < bufferBytes / 4; i++) {
                host.segment().setAtIndex(ValueLayout.JAVA_INT, i, GUARD);
            }
            Replica.Builder replica = Replica.on(d);
            for (int g = 0; g < counts.length; g++) {
                RandomGradients.fill(dtypes[g], host.segment().asSlice(offsets[g]), counts[g], random);
                replica.add(new Gradient("grad" + g, buffer, offsets[g], counts[g], dtypes[g]));
            }
            try (DeviceStream s = d.createStream()) {
                s.copyFromHost(host, 0, buffer, 0, bufferBytes);
                s.synchronize();
            }
            buffers.add(buffer);
            inputs.add(host);
            replicas.add(replica.build());
        }
    }

    public static ReplicaFixture flat(List<? extends Device> devices, long count, DType dtype, long seed) {
        return new ReplicaFixture(devices, new long[] {count}, new DType[] {dtype}, seed);
    }

    private static long align(long bytes) {
        return (bytes + 3) & ~3L;
    }

    /** What device {@code r}'s buffer holds now. */
    public MemorySegment download(int r) {
        Device d = devices.get(r);
        HostBuffer out = d.allocateHost(bufferBytes);
        try (DeviceStream s = d.createStream()) {
            s.copyToHost(buffers.get(r), 0, out, 0, bufferBytes);
            s.synchronize();
        }
        MemorySegment copy = MemorySegment.ofArray(new byte[(int) bufferBytes]);
        copy.copyFrom(out.segment());
        out.close();
        return copy;
    }

    /** Asserts every replica holds the average, and that no guard byte changed. */
    public void assertAveraged() {
        for (int r = 0; r < devices.size(); r++) {
            MemorySegment got = download(r);
            for (int g = 0; g < counts.length; g++) {
                MemorySegment[] in = new MemorySegment[devices.size()];
                for (int i = 0; i < in.length; i++) {
                    in[i] = inputs.get(i).segment().asSlice(offsets[g]);
                }
                long wrong = AverageCheck.countWrong(dtypes[g], in, got.asSlice(offsets[g]), counts[g]);
                assertEquals(0, wrong, "replica " + r + " gradient " + g + " (" + counts[g] + " x " + dtypes[g]
                        + "): elements not the average");
            }
            assertGuardsIntact(r, got);
        }
    }

    /** Every replica's inputs again, as when the fixture was made. */
    public void restore() {
        for (int r = 0; r < devices.size(); r++) {
            try (DeviceStream s = devices.get(r).createStream()) {
                s.copyFromHost(inputs.get(r), 0, buffers.get(r), 0, bufferBytes);
                s.synchronize();
            }
        }
    }

    /** What every replica's buffer holds now. */
    public MemorySegment[] downloadAll() {
        MemorySegment[] all = new MemorySegment[devices.size()];
        for (int r = 0; r < all.length; r++) {
            all[r] = download(r);
        }
        return all;
    }

    /** The replicas' inputs, whole buffers. */
    public MemorySegment[] inputSegments() {
        return inputs.stream().map(HostBuffer::segment).toArray(MemorySegment[]::new);
    }

    /**
     * Asserts replica {@code g} holds the average on its shard of every gradient and its inputs,
     * bit for bit, everywhere else; guards intact.
     */
    public void assertReduceScattered() {
        assertEach("the reduce-scatter", inputSegments(), (g, in, got, r) ->
                CollectiveCheck.wrongAfterReduceScatter(dtypes[g], in, got, counts[g], r));
    }

    /** Asserts every replica holds shard {@code h} of {@code before[h]} on every gradient, bit for bit. */
    public void assertAllGathered(MemorySegment[] before) {
        assertEach("the all-gather", before, (g, in, got, r) ->
                CollectiveCheck.wrongAfterAllGather(dtypes[g], in, got, counts[g]));
    }

    /** Asserts every replica holds the root's inputs, bit for bit. */
    public void assertBroadcast(int root) {
        assertEach("the broadcast from " + root, inputSegments(), (g, in, got, r) ->
                CollectiveCheck.wrongAfterBroadcast(dtypes[g], in, got, counts[g], root));
    }

    private interface Wrong {
        /** Wrong elements of gradient {@code g} of replica {@code r}; segments start at the gradient. */
        long count(int g, MemorySegment[] before, MemorySegment got, int r);
    }

    private void assertEach(String what, MemorySegment[] before, Wrong wrong) {
        for (int r = 0; r < devices.size(); r++) {
            MemorySegment got = download(r);
            for (int g = 0; g < counts.length; g++) {
                MemorySegment[] in = new MemorySegment[before.length];
                for (int q = 0; q < in.length; q++) {
                    in[q] = before[q].asSlice(offsets[g]);
                }
                assertEquals(0, wrong.count(g, in, got.asSlice(offsets[g]), r), "replica " + r + " gradient " + g + " ("
                        + counts[g] + " x " + dtypes[g] + "): elements wrong after " + what);
            }
            assertGuardsIntact(r, got);
        }
    }

    /** Asserts every replica still holds exactly its inputs. */
    public void assertUnchanged() {
        for (int r = 0; r < devices.size(); r++) {
            MemorySegment got = download(r);
            long mismatch = got.mismatch(inputs.get(r).segment());
            assertEquals(-1, mismatch, "replica " + r + " changed at byte " + mismatch);
        }
    }

    private void assertGuardsIntact(int r, MemorySegment got) {
        long at = 0;
        for (int g = 0; g <= counts.length; g++) {
            long end = g < counts.length ? offsets[g] : bufferBytes;
            long start = g == 0 ? 0 : offsets[g - 1] + counts[g - 1] * dtypes[g - 1].bytes();
            for (long b = start; b < end; b++) {
                assertEquals(inputs.get(r).segment().get(ValueLayout.JAVA_BYTE, b), got.get(ValueLayout.JAVA_BYTE, b),
                        "replica " + r + ": guard byte " + b + " was overwritten");
            }
            at = end;
        }
        assertEquals(bufferBytes, at);
    }

    @Override
    public void close() {
        buffers.forEach(DeviceBuffer::close);
        inputs.forEach(HostBuffer::close);
    }
}
