package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every bad input is rejected with a message naming what is wrong, and no gradient changes. */
class BadInputTest {
    private List<JvmDevice> devices;
    private ReplicaFixture fixture;

    @BeforeEach
    void setUp() {
        devices = JvmRuntime.createDevices(3);
        fixture = new ReplicaFixture(devices, new long[] {1000, 17}, new DType[] {DType.FP32, DType.BF16}, 42);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
        devices.forEach(JvmDevice::close);
    }

    private void assertRejected(SyncBackend backend, List<Replica> replicas, String... fragments) {
        List<JvmDevice> syncDevices = backend == SyncBackend.SINGLE ? devices.subList(0, 1) : devices;
        try (GradientSynchronizer sync = Synchronizers.create(backend, syncDevices, SyncOptions.defaults())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.synchronize(replicas));
            for (String fragment : fragments) {
                assertTrue(e.getMessage().contains(fragment), "'" + fragment + "' in: " + e.getMessage());
            }
        }
        fixture.assertUnchanged();
    }

    private List<Replica> with(int r, Function<Replica, Replica> change) {
        List<Replica> copy = new ArrayList<>(fixture.replicas);
        copy.set(r, change.apply(copy.get(r)));
        return copy;
    }

    private static Replica replaceGradient(Replica replica, int g, Gradient gradient) {
        List<Gradient> grads = new ArrayList<>(replica.gradients());
        grads.set(g, gradient);
        return new Replica(replica.device(), grads);
    }

    @Test
    void emptyReplicaSet() {
        assertRejected(SyncBackend.CPU, List.of(), "replica set is empty");
    }

    @Test
    void nullReplicaSet() {
        assertRejected(SyncBackend.CPU, null, "replica set is empty");
    }

    @Test
    void wrongNumberOfReplicas() {
        assertRejected(SyncBackend.CPU, fixture.replicas.subList(0, 2), "expected 3", "got 2");
    }

    @Test
    void replicasInTheWrongDeviceOrder() {
        List<Replica> swapped = new ArrayList<>(fixture.replicas);
        swapped.set(0, fixture.replicas.get(1));
        swapped.set(1, fixture.replicas.get(0));
        assertRejected(SyncBackend.CPU, swapped, "replica 0", "jvm:1", "jvm:0");
    }

    @Test
    void namesDiffer() {
        List<Replica> bad = with(2, r -> {
            Gradient g = r.gradients().get(1);
            return replaceGradient(r, 1, new Gradient("bias", g.buffer(), g.byteOffset(), g.count(), g.dtype()));
        });
        assertRejected(SyncBackend.CPU, bad, "replica 2", "'bias'", "'grad1'");
    }

    @Test
    void lengthsDiffer() {
        List<Replica> bad = with(1, r -> {
            Gradient g = r.gradients().getFirst();
            return replaceGradient(r, 0, new Gradient(g.name(), g.buffer(), g.byteOffset(), 999, g.dtype()));
        });
        assertRejected(SyncBackend.CPU, bad, "replica 1", "'grad0'", "999 elements", "1000");
    }

    @Test
    void dtypesDiffer() {
        List<Replica> bad = with(1, r -> {
            Gradient g = r.gradients().get(1);
            return replaceGradient(r, 1, new Gradient(g.name(), g.buffer(), g.byteOffset(), g.count(), DType.FP16));
        });
        assertRejected(SyncBackend.CPU, bad, "replica 1", "'grad1'", "fp16", "bf16");
    }

    @Test
    void gradientCountsDiffer() {
        List<Replica> bad = with(2, r -> new Replica(r.device(), r.gradients().subList(0, 1)));
        assertRejected(SyncBackend.CPU, bad, "replica 2", "1 gradients", "replica 0 has 2");
    }

    @Test
    void bufferOnAnotherDevice() {
        List<Replica> bad = with(1, r -> {
            Gradient g = r.gradients().getFirst();
            DeviceBuffer foreign = fixture.buffers.get(2);
            return replaceGradient(r, 0, new Gradient(g.name(), foreign, g.byteOffset(), g.count(), g.dtype()));
        });
        assertRejected(SyncBackend.CPU, bad, "replica 1", "'grad0'", "jvm:2", "not on the replica's device");
    }

    /**
     * A synchronizer checks a replica set it accepted last call only for what can change (closed
     * memory or streams): a buffer closed between two calls with the same replicas still fails the
     * second, naming it, with nothing moved; a bad set after a good one gets the whole check.
     */
    @Test
    void repeatedCallsStillCheckWhatCanChange() {
        DeviceBuffer extra = devices.get(1).allocate(17 * 2);
        List<Replica> replicas = with(1, r -> replaceGradient(r, 1, new Gradient("grad1", extra, 0, 17, DType.BF16)));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults())) {
            sync.synchronize(replicas);
            sync.synchronize(replicas); // the same objects: the short check
            java.lang.foreign.MemorySegment[] before = fixture.downloadAll();
            extra.close();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.synchronize(replicas));
            assertTrue(e.getMessage().contains("replica 1") && e.getMessage().contains("closed buffer"), e.getMessage());
            List<Replica> renamed = with(0, r -> replaceGradient(r, 1, r.gradients().getFirst()));
            e = assertThrows(IllegalArgumentException.class, () -> sync.synchronize(renamed));
            assertTrue(e.getMessage().contains("'grad0' appears twice"), e.getMessage());
            java.lang.foreign.MemorySegment[] after = fixture.downloadAll();
            for (int r = 0; r < before.length; r++) {
                assertEquals(-1, before[r].mismatch(after[r]), "replica " + r + " changed by a refused call");
            }
        }
    }

    @Test
    void duplicateNames() {
        List<Replica> bad = with(0, r -> replaceGradient(r, 1, r.gradients().getFirst()));
        assertRejected(SyncBackend.CPU, bad, "'grad0' appears twice");
    }

    @Test
    void closedBuffer() {
        DeviceBuffer extra = devices.get(1).allocate(64);
        extra.close();
        List<Replica> bad = with(1, r -> replaceGradient(r, 1, new Gradient("grad1", extra, 0, 17, DType.BF16)));
        assertRejected(SyncBackend.CPU, bad, "replica 1", "closed buffer");
    }

    @ParameterizedTest
    @EnumSource(value = SyncBackend.class, names = {"SINGLE", "CPU"})
    void useAfterClose(SyncBackend backend) {
        List<JvmDevice> syncDevices = backend == SyncBackend.SINGLE ? devices.subList(0, 1) : devices;
        GradientSynchronizer sync = Synchronizers.create(backend, syncDevices, SyncOptions.defaults());
        sync.close();
        sync.close(); // idempotent
        List<Replica> replicas = backend == SyncBackend.SINGLE ? fixture.replicas.subList(0, 1) : fixture.replicas;
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> sync.synchronize(replicas));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IllegalStateException.class, sync::barrier);
        fixture.assertUnchanged();
    }

    @Test
    void singleChecksItsInputToo() {
        assertRejected(SyncBackend.SINGLE, fixture.replicas, "expected 1", "got 3");
    }

    @Test
    void gradientViewsOutsideTheirBufferAreRejectedWhenMade() {
        DeviceBuffer b = fixture.buffers.getFirst();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Gradient("w", b, b.byteSize() - 4, 2, DType.FP32));
        assertTrue(e.getMessage().contains("do not fit"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new Gradient("w", b, 2, 1, DType.FP32));
        assertTrue(e.getMessage().contains("multiple of 4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new Gradient("w", b, 0, -1, DType.FP32));
        assertTrue(e.getMessage().contains("count must be >= 0"), e.getMessage());
    }

    @Test
    void creatingWithBadDeviceListsFails() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Synchronizers.create(SyncBackend.CPU, List.of()));
        assertTrue(e.getMessage().contains("at least one device"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> Synchronizers.create(SyncBackend.CPU, List.of(devices.get(0), devices.get(0))));
        assertTrue(e.getMessage().contains("listed twice"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Synchronizers.create(SyncBackend.SINGLE, devices));
        assertTrue(e.getMessage().contains("exactly one device"), e.getMessage());
        assertEquals(SyncBackend.SINGLE, Synchronizers.resolveAuto(devices.subList(0, 1)));
    }

    @Test
    void aNullDeviceIsNamed() {
        List<JvmDevice> withNull = new ArrayList<>(devices);
        withNull.set(1, null);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Synchronizers.create(SyncBackend.CPU, withNull));
        assertTrue(e.getMessage().contains("device 1 of 3 is null"), e.getMessage());
    }

    @Test
    void devicesOfAnotherCallWithTheSameIdsAreNamedAsSuch() {
        List<JvmDevice> others = JvmRuntime.createDevices(3);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, others)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.synchronize(fixture.replicas));
            assertTrue(e.getMessage().contains("a different device object than this synchronizer's jvm:0"), e.getMessage());
        } finally {
            others.forEach(JvmDevice::close);
        }
    }

    @Test
    void aClosedJvmDeviceSaysSo() {
        JvmDevice d = JvmRuntime.createDevices(1).getFirst();
        var stream = d.createStream();
        DeviceBuffer b = d.allocate(64);
        d.close(); // closes its streams
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> stream.fill32(b, 0, 64, 0));
        assertEquals("stream of jvm:0 is closed", e.getMessage()); // not an executor's RejectedExecutionException
        e = assertThrows(IllegalStateException.class, () -> d.allocate(64));
        assertEquals("jvm:0 is closed", e.getMessage());
        b.close();
    }

    @Test
    void statsPrintThemselves() {
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices)) {
            sync.synchronize(fixture.replicas);
            assertTrue(sync.stats().toString().startsWith("1 calls, "), sync.stats().toString());
        }
    }

    @Test
    void cpuStagingBeyondTheMachineIsRefusedBeforeAllocating() {
        List<JvmDevice> many = JvmRuntime.createDevices(1000);
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Synchronizers.create(SyncBackend.CPU, many, SyncOptions.defaults().withChunkBytes(8 << 20)));
            assertTrue(e.getMessage().contains("1000 devices need") && e.getMessage().contains("pinned staging"), e.getMessage());
        } finally {
            many.forEach(JvmDevice::close);
        }
    }
}
