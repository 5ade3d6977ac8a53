package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The opencl backend on logical devices over whatever OpenCL device is here (PoCL in CI): N
 * queues standing in for N devices, exact against float64, guards intact.
 */
class OpenClSynchronizerTest {
    /** 4 KiB pipeline steps: even short tests run many steps through both queues of each device. */
    private static final SyncOptions SMALL_STEPS = SyncOptions.defaults().withOpenClStepBytes(4096);

    private List<OpenClDevice> devices = List.of();

    static List<OpenClDevice> logical(int n) {
        assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
        return OpenClRuntime.logicalDevices(n);
    }

    @AfterEach
    void closeDevices() {
        devices.forEach(OpenClDevice::close);
    }

    static Stream<Arguments> shapes() {
        return Stream.of(1, 2, 3, 4).flatMap(n -> Stream.of(1L, 7L, 63L, 65L, 1023L, 4099L, 100_003L)
                .flatMap(len -> Stream.of(DType.values()).flatMap(t -> Stream.of(true, false)
                        .map(small -> Arguments.of(n, len, t, small)))));
    }

    @ParameterizedTest(name = "N={0} length={1} {2} small steps={3}")
    @MethodSource("shapes")
    void averagesEveryReplicaExactly(int n, long length, DType dtype, boolean smallSteps) {
        devices = logical(n);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices,
                smallSteps ? SMALL_STEPS : SyncOptions.defaults());
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, seed())) {
            sync.synchronize(f.replicas);
            f.assertAveraged();
            assertEquals(SyncBackend.OPENCL, sync.backend());
            assertEquals(n, sync.worldSize());
        }
    }

    @ParameterizedTest(name = "N={0}")
    @ValueSource(ints = {2, 3, 4})
    void averagesMixedGradientsSharingOneBuffer(int n) {
        devices = logical(n);
        long[] counts = {1, 5, 1000, 3, 2049, 77_777, 2, 1024, 0, 129};
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP16,
            DType.FP32, DType.BF16, DType.FP16};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices, SMALL_STEPS);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
            sync.synchronize(f.replicas);
            f.assertAveraged();
            RepeatCheck.assertReplicasIdentical(f);
        }
    }

    /** Gradients back to back in one buffer merge into one run; the split must still respect each one. */
    @Test
    void averagesBackToBackGradientsAsOneRun() {
        devices = logical(3);
        long[] counts = {100, 37, 4096, 1};
        DType[] types = {DType.FP32, DType.FP32, DType.FP32, DType.FP32};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
            List<Replica> adjacent = new ArrayList<>();
            for (Replica r : f.replicas) {
                // views that touch: grad1 starts where grad0 ends, and so on
                List<Gradient> grads = new ArrayList<>();
                long at = f.offsets[0];
                for (Gradient g : r.gradients()) {
                    grads.add(new Gradient(g.name(), g.buffer(), at, g.count(), g.dtype()));
                    at += g.byteSize();
                }
                adjacent.add(new Replica(r.device(), grads));
            }
            long total = 100 + 37 + 4096 + 1;
            try (ReplicaFixture whole = ReplicaFixture.flat(devices, total, DType.FP32, seed())) {
                List<Replica> merged = new ArrayList<>();
                for (int i = 0; i < whole.replicas.size(); i++) {
                    Gradient g = whole.replicas.get(i).gradients().getFirst();
                    List<Gradient> grads = new ArrayList<>();
                    long at = g.byteOffset();
                    for (int k = 0; k < counts.length; k++) {
                        grads.add(new Gradient("g" + k, g.buffer(), at, counts[k], DType.FP32));
                        at += counts[k] * 4;
                    }
                    merged.add(new Replica(g.buffer().device(), grads));
                }
                sync.synchronize(merged);
                whole.assertAveraged();
            }
        }
    }

    @Test
    void reusesItsBuffersAcrossCallsAndLayouts() {
        devices = logical(4);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices)) {
            for (long length : new long[] {10_000, 10_000, 333, 50_001, 5}) {
                try (ReplicaFixture f = ReplicaFixture.flat(devices, length, DType.BF16, seed())) {
                    sync.synchronize(f.replicas);
                    f.assertAveraged();
                }
            }
            assertEquals(5, sync.stats().calls());
            assertTrue(sync.stats().phases().containsKey("wait"), sync.stats().describe());
        }
    }

    /** Random sizes, every result exact, replicas bit-identical, and the same input giving the same bits. */
    @ParameterizedTest(name = "N={0}")
    @ValueSource(ints = {2, 3, 4})
    void repeatedRandomSizesAreExactAndDeterministic(int n) {
        devices = logical(n);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices, SMALL_STEPS)) {
            RepeatCheck.randomRounds(sync, devices, 15, 40_000, seed());
        }
    }

    @Test
    void rejectsBadInputsLeavingEveryGradientAsItWas() {
        devices = logical(3);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices);
                ReplicaFixture f = new ReplicaFixture(devices, new long[] {1000, 17}, new DType[] {DType.FP32, DType.BF16}, 7)) {
            assertRejected(sync, f, with(f, 1, r -> replace(r, 0, g -> new Gradient(g.name(), g.buffer(), g.byteOffset(), 999, g.dtype()))),
                    "replica 1", "999 elements");
            assertRejected(sync, f, with(f, 2, r -> replace(r, 1, g -> new Gradient(g.name(), g.buffer(), g.byteOffset(), g.count(), DType.FP16))),
                    "replica 2", "fp16", "bf16");
            DeviceBuffer foreign = f.buffers.get(0);
            assertRejected(sync, f, with(f, 1, r -> replace(r, 0, g -> new Gradient(g.name(), foreign, g.byteOffset(), g.count(), g.dtype()))),
                    "replica 1", devices.get(0).id(), "not on the replica's device");
            assertRejected(sync, f, f.replicas.subList(0, 2), "expected 3", "got 2");
            DeviceBuffer closed = devices.get(2).allocate(64);
            closed.close();
            assertRejected(sync, f, with(f, 2, r -> replace(r, 1, g -> new Gradient("grad1", closed, 0, 17, DType.BF16))),
                    "replica 2", "closed buffer");
            sync.synchronize(f.replicas); // still usable after rejections
            f.assertAveraged();
        }
    }

    @Test
    void refusesDevicesItCannotServe() {
        List<JvmDevice> jvm = JvmRuntime.createDevices(2);
        try {
            // unsupported rather than illegal: the bench's "--backend all" skips what cannot run on its devices
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> Synchronizers.create(SyncBackend.OPENCL, jvm));
            assertTrue(e.getMessage().contains("needs OpenCL devices"), e.getMessage());
            e = assertThrows(UnsupportedOperationException.class, () -> Synchronizers.create(SyncBackend.PTX, jvm));
            assertTrue(e.getMessage().contains("needs CUDA GPUs"), e.getMessage());
        } finally {
            jvm.forEach(JvmDevice::close);
        }
        devices = logical(9);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Synchronizers.create(SyncBackend.OPENCL, devices));
        assertTrue(e.getMessage().contains("at most 8"), e.getMessage());
    }

    @Test
    void useAfterCloseThrows() {
        devices = logical(2);
        GradientSynchronizer sync = Synchronizers.create(SyncBackend.OPENCL, devices);
        sync.close();
        sync.close();
        try (ReplicaFixture f = ReplicaFixture.flat(devices, 100, DType.FP32, 1)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> sync.synchronize(f.replicas));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            f.assertUnchanged();
        }
    }

    @Test
    void logicalDevicesAreDistinctWithTheirOwnIds() {
        devices = logical(3);
        assertEquals(3, devices.stream().map(OpenClDevice::id).distinct().count(), devices.toString());
        assertTrue(devices.stream().allMatch(OpenClDevice::isLogical));
        try (var host = devices.get(1).allocateHost(4096)) {
            assertTrue(host.isPinned(), "mapped CL_MEM_ALLOC_HOST_PTR memory counts as pinned");
            host.segment().fill((byte) 3);
            assertEquals(3, host.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4095));
        }
    }

    private static void assertRejected(GradientSynchronizer sync, ReplicaFixture f, List<Replica> bad, String... fragments) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.synchronize(bad));
        for (String fragment : fragments) {
            assertTrue(e.getMessage().contains(fragment), "'" + fragment + "' in: " + e.getMessage());
        }
        f.assertUnchanged();
    }

    private static List<Replica> with(ReplicaFixture f, int r, UnaryOperator<Replica> change) {
        List<Replica> copy = new ArrayList<>(f.replicas);
        copy.set(r, change.apply(copy.get(r)));
        return copy;
    }

    private static Replica replace(Replica replica, int g, UnaryOperator<Gradient> change) {
        List<Gradient> grads = new ArrayList<>(replica.gradients());
        grads.set(g, change.apply(grads.get(g)));
        return new Replica(replica.device(), grads);
    }

    private static long seed() {
        return ThreadLocalRandom.current().nextLong();
    }
}
