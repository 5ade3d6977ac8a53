package io.gradsync.sync;

import io.gradsync.sync.internal.HostAverage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import java.lang.foreign.MemorySegment;
import static org.junit.jupiter.api.Assertions.assertThrows;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Host staging on JVM devices: the reference path, exact against float64 for every N and length. */
class CpuStagingSynchronizerTest {
    /** Small chunks and slots so that even short tests run many chunks through a wrapping ring. */
    private static final SyncOptions SMALL = new SyncOptions(4096, 3, 3);

    private List<JvmDevice> devices = List.of();

    @AfterEach
    void closeDevices() {
        devices.forEach(JvmDevice::close);
    }

    static Stream<Arguments> shapes() {
        return Stream.of(1, 2, 3, 4).flatMap(n -> Stream.of(1L, 7L, 1023L, 1025L, 4099L, 100_003L)
                .flatMap(len -> Stream.of(DType.values()).map(t -> Arguments.of(n, len, t))));
    }

    @ParameterizedTest(name = "N={0} length={1} {2}")
    @MethodSource("shapes")
    void averagesEveryReplicaExactly(int n, long length, DType dtype) {
        devices = JvmRuntime.createDevices(n);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, seed())) {
            sync.synchronize(f.replicas);
            f.assertAveraged();
        }
    }

    @Test
    void averagesManyGradientsOfMixedSizesAndTypesSharingOneBuffer() {
        devices = JvmRuntime.createDevices(3);
        long[] counts = {1, 5, 1000, 3, 2049, 77_777, 2, 1024};
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP16, DType.FP32};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
            sync.synchronize(f.replicas);
            f.assertAveraged();
        }
    }

    /**
     * Replicas of a model split into many short gradients (fp32 ones go to the lanes a chunk at a
     * time, the rest one by one) beside long and 16-bit ones: exact, for fresh replicas on one
     * synchronizer, call after call (the batches are remade for new replicas).
     */
    @ParameterizedTest(name = "{0} replicas")
    @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3, 4, 5})
    void averagesReplicasOfManyShortGradientsExactly(int n) {
        devices = JvmRuntime.createDevices(n);
        long[] counts = {1, 15, 16, 17, 31, 32, 33, 100, 511, 512, 513, 3000, 40, 9, 200};
        DType[] types = {DType.FP32, DType.FP32, DType.FP32, DType.FP32, DType.FP32, DType.FP32, DType.FP32, DType.BF16,
            DType.FP32, DType.FP32, DType.FP32, DType.FP32, DType.FP16, DType.FP32, DType.FP32};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices)) {
            for (int round = 0; round < 40; round++) {
                try (ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed() + round)) {
                    sync.synchronize(f.replicas);
                    f.assertAveraged();
                }
            }
        }
    }

    /**
     * The asynchronous call on the caller's streams queues every chunk's copies at once, far more
     * chunks than the ring has slots, behind caller streams that are still busy: exact every round,
     * whether the stream waits for the caller's device or not.
     */
    @Test
    void asyncOnBusyCallerStreamsQueuesEveryChunkAheadAndStaysExact() {
        devices = JvmRuntime.createDevices(3);
        long[] counts = {1, 5, 1000, 3, 2049, 77_777, 2, 1024};
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP16, DType.FP32};
        for (boolean wait : new boolean[] {true, false}) {
            List<io.gradsync.tasks.device.DeviceStream> streams = new java.util.ArrayList<>();
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL.withWaitForCaller(wait));
                    ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
                List<Replica> replicas = new java.util.ArrayList<>();
                for (int r = 0; r < devices.size(); r++) {
                    streams.add(devices.get(r).createStream());
                    replicas.add(f.replicas.get(r).withStream(streams.get(r)));
                }
                for (int round = 0; round < 3; round++) {
                    for (var s : streams) {
                        ((io.gradsync.tasks.jvm.JvmStream) s).submit("earlier work", () -> sleep(20));
                    }
                    SyncHandle h = sync.synchronizeAsync(replicas);
                    h.await();
                    streams.forEach(io.gradsync.tasks.device.DeviceStream::synchronize);
                    f.assertAveraged(); // averaging an average changes nothing beyond rounding
                }
                assertEquals(true, sync.stats().phases().containsKey("queue ahead"), "the copies were not queued ahead: " + sync.stats());
                sync.synchronize(replicas); // the synchronous form after the asynchronous one, on the same staging
                f.assertAveraged();
            } finally {
                streams.forEach(io.gradsync.tasks.device.DeviceStream::close);
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Work the caller queued on a device, still writing a gradient, finishes before the average
     * reads it; with {@link SyncOptions#waitForCaller()} off nothing is waited for (the caller has
     * said its work is done), shown by a queued write that cannot run until synchronize returned.
     */
    @Test
    void theCallersQueuedWorkComesFirstUnlessToldOtherwise() throws Exception {
        devices = JvmRuntime.createDevices(2);
        for (boolean wait : new boolean[] {true, false}) {
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL.withWaitForCaller(wait));
                    ReplicaFixture f = ReplicaFixture.flat(devices, 10_007, DType.FP32, seed());
                    io.gradsync.tasks.device.DeviceStream s = devices.getFirst().createStream()) {
                long bytes = f.inputs.getFirst().byteSize();
                s.fill32(f.buffers.getFirst(), 0, bytes, 0);
                s.synchronize();
                ((io.gradsync.tasks.jvm.JvmStream) s).submit(() -> { // the caller's late write of replica 0's gradient
                    try {
                        if (wait) {
                            Thread.sleep(100);
                        } else {
                            release.await();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                s.copyFromHost(f.inputs.getFirst(), 0, f.buffers.getFirst(), 0, bytes);
                sync.synchronize(f.replicas);
                if (wait) {
                    f.assertAveraged(); // the write came first
                } else {
                    assertEquals(1, release.getCount(), "returned without waiting for the queued write");
                    release.countDown();
                    s.synchronize();
                }
            }
        }
        assertEquals(true, SyncOptions.defaults().waitForCaller(), "waiting is the default");
        assertEquals(false, SyncOptions.defaults().withWaitForCaller(false).withChunkBytes(8192).waitForCaller());
    }

    /** The sum of squares fused into the host average: per gradient, the float64 sum over the averaged values, every time the same. */
    @Test
    void sumsTheSquaresOfTheAverageInTheSamePass() {
        devices = JvmRuntime.createDevices(3);
        long[] counts = {1, 5000, 3, 77_777, 2049};
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
            FusedSumOfSquares fused = (FusedSumOfSquares) sync;
            double[] first = fused.synchronizeSumOfSquares(f.replicas);
            f.assertAveraged();
            MemorySegment heap = f.download(0);
            MemorySegment got = java.lang.foreign.Arena.ofAuto().allocate(heap.byteSize(), 64).copyFrom(heap); // aligned, as staging is
            assertEquals(counts.length, first.length);
            for (int g = 0; g < counts.length; g++) {
                double want = HostAverage.sumOfSquares(types[g], got.asSlice(f.offsets[g]), counts[g]);
                assertEquals(want, first[g], 1e-12 * want, "gradient " + g);
            }
            f.restore();
            double[] again = fused.synchronizeSumOfSquares(f.replicas);
            for (int g = 0; g < counts.length; g++) {
                assertEquals(Double.doubleToRawLongBits(first[g]), Double.doubleToRawLongBits(again[g]), "deterministic, gradient " + g);
            }
            sync.synchronize(f.replicas); // the plain call afterwards collects nothing and still averages
        }
        List<JvmDevice> one = JvmRuntime.createDevices(1);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, one, SMALL);
                ReplicaFixture f = ReplicaFixture.flat(one, 10, DType.FP32, seed())) {
            assertThrows(UnsupportedOperationException.class, () -> ((FusedSumOfSquares) sync).synchronizeSumOfSquares(f.replicas));
        } finally {
            one.forEach(JvmDevice::close);
        }
    }

    /**
     * A gradient's sum of squares does not depend on what shares the call with it: buckets are
     * grouped into calls by timing, and the global norm (and clip factor) must not change with that.
     * Over many calls, while the JIT compiles the sums: the lanes' sums once changed their last bit
     * when C2 compiled them (their lanes added as a tree; {@code LaneSquaresTest} checks the order).
     */
    @Test
    void aGradientsSumOfSquaresIsTheSameWhateverSharesItsCall() {
        devices = JvmRuntime.createDevices(2);
        long[] counts = {3, 777, 100_003, 5};
        DType[] types = {DType.FP32, DType.BF16, DType.FP32, DType.FP16};
        long seed = seed();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL)) {
            FusedSumOfSquares fused = (FusedSumOfSquares) sync;
            for (int round = 0; round < 60; round++) {
                try (ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed + round)) {
                    double[] together = fused.synchronizeSumOfSquares(f.replicas);
                    for (int g : new int[] {2, 1, 3}) {
                        f.restore();
                        List<Replica> alone = f.replicas.stream()
                                .map(r -> Replica.on(r.device()).add(r.gradients().get(g)).build()).toList();
                        double[] single = fused.synchronizeSumOfSquares(alone);
                        assertEquals(Double.doubleToRawLongBits(together[g]), Double.doubleToRawLongBits(single[0]),
                                "gradient " + g + ": " + together[g] + " with the others, " + single[0] + " alone (seed "
                                        + (seed + round) + ", round " + round + ")");
                    }
                }
            }
        }
    }

    @Test
    void reusesItsStagingAcrossCallsAndLayouts() {
        devices = JvmRuntime.createDevices(4);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SMALL)) {
            for (long length : new long[] {10_000, 10_000, 333, 50_001}) {
                try (ReplicaFixture f = ReplicaFixture.flat(devices, length, DType.FP32, seed())) {
                    sync.synchronize(f.replicas);
                    f.assertAveraged();
                }
            }
        }
    }

    @Test
    void defaultOptionsAverageALargeBuffer() {
        devices = JvmRuntime.createDevices(4);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, (9L << 20) + 13, DType.FP32, seed())) {
            sync.synchronize(f.replicas);
            f.assertAveraged();
        }
    }

    /** More workers than slots and cores, tiny chunks: any ordering bug between workers shows here. */
    @Test
    void repeatedCallsWithRacingWorkersStayExact() {
        devices = JvmRuntime.createDevices(3);
        SyncOptions racy = new SyncOptions(4096, 2, 6);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, racy)) {
            for (int i = 0; i < 40; i++) {
                long length = 1 + ThreadLocalRandom.current().nextLong(40_000);
                try (ReplicaFixture f = ReplicaFixture.flat(devices, length, DType.FP32, seed())) {
                    sync.synchronize(f.replicas);
                    f.assertAveraged();
                }
            }
        }
    }

    private static long seed() {
        return ThreadLocalRandom.current().nextLong();
    }

    /**
     * An interrupted await() says so, keeps the interrupt status, and the call goes on: the same
     * handle's next await() returns with the average (it was reported as "averaging failed on one
     * of the devices: null").
     */
    @Test
    void anInterruptedAwaitSaysSoAndTheCallGoesOn() throws Exception {
        devices = JvmRuntime.createDevices(2);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, 1 << 18, DType.FP32, 3);
                io.gradsync.tasks.device.DeviceStream slow = devices.get(0).createStream()) {
            ((io.gradsync.tasks.jvm.JvmStream) slow).submit("slow backward", () -> {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }); // the call waits for the whole device first
            SyncHandle h = sync.synchronizeAsync(f.replicas);
            Interrupts.after(Thread.currentThread(), 100);
            IllegalStateException e = assertThrows(IllegalStateException.class, h::await);
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("interrupted while waiting for the call; it goes on"), e.getMessage());
            org.junit.jupiter.api.Assertions.assertTrue(Thread.interrupted(), "the interrupt status is kept");
            h.await();
            f.assertAveraged();
        }
    }
}
