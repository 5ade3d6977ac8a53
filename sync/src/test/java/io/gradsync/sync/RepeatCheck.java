package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gradsync.tasks.device.Device;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Race hunting for the device backends: many calls on random sizes, each checked against
 * float64, every replica bit-identical to the others (each average is computed once and copied),
 * and the same input run again giving the same bits (a result that depends on timing is a race).
 */
public final class RepeatCheck {
    private RepeatCheck() {
    }

    /** Asserts every replica's buffer equals replica 0's, byte for byte. */
    public static void assertReplicasIdentical(ReplicaFixture f) {
        MemorySegment first = f.download(0);
        for (int r = 1; r < f.devices.size(); r++) {
            long at = first.mismatch(f.download(r));
            assertEquals(-1, at, "replica " + r + " differs from replica 0 at byte " + at);
        }
    }

    /**
     * Averages the fixture twice, the second time from its restored inputs through what the first
     * call cached (plan, prepared launches, recorded schedule): checked against float64 each time,
     * every replica bit-identical after the first.
     */
    public static void averagesTwice(GradientSynchronizer sync, ReplicaFixture f) {
        sync.synchronize(f.replicas);
        f.assertAveraged();
        assertReplicasIdentical(f);
        f.restore();
        sync.synchronize(f.replicas);
        f.assertAveraged();
    }

    /**
     * {@code iterations} rounds on lengths drawn log-uniformly from 1..maxLength, random dtypes,
     * sometimes two gradients in one buffer; each round averaged, checked, restored, averaged again
     * through the now cached plan, and compared bit for bit with the first result.
     */
    public static void randomRounds(GradientSynchronizer sync, List<? extends Device> devices, int iterations, long maxLength,
            long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < iterations; i++) {
            long length = Math.max(1, (long) Math.exp(random.nextDouble() * Math.log(maxLength)));
            DType dtype = DType.values()[random.nextInt(DType.values().length)];
            long[] counts = random.nextBoolean() ? new long[] {length} : new long[] {length, 1 + random.nextLong(length)};
            DType[] types = counts.length == 1 ? new DType[] {dtype} : new DType[] {dtype, DType.values()[random.nextInt(3)]};
            String what = "round " + i + " (seed " + seed + "): " + java.util.Arrays.toString(counts) + " x "
                    + java.util.Arrays.toString(types);
            try (ReplicaFixture f = new ReplicaFixture(devices, counts, types, random.nextLong())) {
                sync.synchronize(f.replicas);
                try {
                    f.assertAveraged();
                    assertReplicasIdentical(f);
                } catch (AssertionError e) {
                    throw new AssertionError(what + ": " + e.getMessage(), e);
                }
                MemorySegment before = f.download(0);
                f.restore();
                sync.synchronize(f.replicas);
                for (int r = 0; r < devices.size(); r++) {
                    long at = before.mismatch(f.download(r));
                    assertEquals(-1, at, what + ": the same input gave different bits on replica " + r + " at byte " + at);
                }
            }
        }
    }
}
