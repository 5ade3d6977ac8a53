package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.nccl.Nccl;
import io.gradsync.tasks.cuda.CudaDevice;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The nccl backend in one process over 2 and 4 GPUs, exact against the float64 average; its
 * broadcast, reduce-scatter and all-gather over 1 to 4 GPUs, every element checked.
 */
@Tag("gpu")
class NcclGpuTest {

    @BeforeAll
    static void ncclAndItsEnvironment() {
        assertNotNull(System.getenv("NCCL_NVLS_ENABLE"),
                "set NCCL_NVLS_ENABLE=0: NVLink multicast must stay off on the GPU node");
        assertTrue(Nccl.isAvailable(), () -> Nccl.availability().reason());
    }

    @ParameterizedTest(name = "{0} GPUs, {1} x {2}")
    @CsvSource({
        "2, 1, FP32", "2, 1000003, FP32", "2, 16777216, FP32", "2, 999999, BF16", "2, 77777, FP16",
        "4, 1, FP32", "4, 7, BF16", "4, 1000003, FP32", "4, 16777216, FP32", "4, 3000001, BF16", "4, 123457, FP16"
    })
    void averagesExactly(int n, long length, DType dtype) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, ThreadLocalRandom.current().nextLong())) {
            assertEquals(SyncBackend.NCCL, sync.backend());
            assertEquals(n, sync.worldSize());
            assertEquals(0, sync.rank());
            sync.synchronize(f.replicas);
            f.assertAveraged();
        }
    }

    /** Views with guard bytes between them: merged calls must not spill into the guards. */
    @ParameterizedTest(name = "{0} GPUs, mixed gradients, repeated")
    @ValueSource(ints = {2, 4})
    void averagesManyMixedGradientsRepeatedly(int n) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        long[] counts = {1, 5, 1000, 3, 2049, 777_777, 2, 1024, 65_536, 0};
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP16, DType.FP32,
            DType.BF16, DType.FP32};
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, ThreadLocalRandom.current().nextLong())) {
            for (int i = 0; i < 3; i++) {
                sync.synchronize(f.replicas); // averaging an average changes nothing beyond rounding
            }
            sync.barrier();
            f.assertAveraged();
        }
    }

    /** Gradients whose counts divide by 2, 3 or 4 or leave a tail, fewer elements than replicas, and an empty one. */
    private static final long[] SHARDED_COUNTS = {1, 5, 1000, 3, 2049, 777_777, 2, 1024, 65_536, 0, 12, 1_000_003};
    private static final DType[] SHARDED_TYPES = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32,
        DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP16, DType.FP32};

    private static ReplicaFixture sharded(List<CudaDevice> devices) {
        return new ReplicaFixture(devices, SHARDED_COUNTS, SHARDED_TYPES, ThreadLocalRandom.current().nextLong());
    }

    /** One GPU: the one replica is the root and every shard's owner, so each collective leaves it as it is. */
    @Test
    void oneReplicaCollectivesLeaveItAsItIsAndRefuseOtherRoots() {
        List<CudaDevice> devices = GpuSet.own(1).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices); ReplicaFixture f = sharded(devices)) {
            assertEquals(SyncBackend.NCCL, sync.backend());
            assertEquals(1, sync.worldSize());
            sync.broadcast(f.replicas, 0);
            sync.reduceScatter(f.replicas);
            sync.allGather(f.replicas);
            f.assertUnchanged();
            sync.broadcastAsync(f.replicas, 0).await();
            sync.reduceScatterAsync(f.replicas).await();
            sync.allGatherAsync(f.replicas).await();
            f.assertUnchanged();
            for (int root : new int[] {1, -1}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.broadcast(f.replicas, root));
                assertTrue(e.getMessage().contains("root " + root) && e.getMessage().contains("0..0"), e.getMessage());
                assertThrows(IllegalArgumentException.class, () -> sync.broadcastAsync(f.replicas, root));
            }
            f.assertUnchanged();
            assertEquals(6, sync.stats().calls());
        }
    }

    @ParameterizedTest(name = "{0} GPUs")
    @ValueSource(ints = {2, 3, 4})
    void broadcastFromEveryRootIsBitForBit(int n) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices); ReplicaFixture f = sharded(devices)) {
            for (int root = 0; root < n; root++) {
                if (root % 2 == 0) {
                    sync.broadcast(f.replicas, root);
                } else {
                    sync.broadcastAsync(f.replicas, root).await();
                }
                f.assertBroadcast(root);
                f.restore();
            }
            for (int root : new int[] {n, -1}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.broadcast(f.replicas, root));
                assertTrue(e.getMessage().contains("root " + root) && e.getMessage().contains("0.." + (n - 1)), e.getMessage());
            }
            f.assertUnchanged();
        }
    }

    @ParameterizedTest(name = "{0} GPUs, async {1}")
    @CsvSource({"2, false", "2, true", "3, false", "4, false", "4, true"})
    void reduceScatterAveragesEachShardAndLeavesTheRestAsItWas(int n, boolean async) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices); ReplicaFixture f = sharded(devices)) {
            for (int i = 0; i < 2; i++) { // the second call runs the cached calls
                if (async) {
                    sync.reduceScatterAsync(f.replicas).await();
                } else {
                    sync.reduceScatter(f.replicas);
                }
                f.assertReduceScattered();
                f.restore();
            }
        }
    }

    @ParameterizedTest(name = "{0} GPUs, async {1}")
    @CsvSource({"2, false", "2, true", "3, false", "4, false", "4, true"})
    void allGatherCopiesEveryShardFromItsOwner(int n, boolean async) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices); ReplicaFixture f = sharded(devices)) {
            if (async) {
                sync.allGatherAsync(f.replicas).await();
            } else {
                sync.allGather(f.replicas);
            }
            f.assertAllGathered(f.inputSegments());
        }
    }

    /** Sharded training's step: the reduce-scatter, then the all-gather of its result, is the average on every replica. */
    @ParameterizedTest(name = "{0} GPUs")
    @ValueSource(ints = {2, 3, 4})
    void reduceScatterThenAllGatherAveragesEveryReplica(int n) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices); ReplicaFixture f = sharded(devices)) {
            sync.reduceScatter(f.replicas);
            java.lang.foreign.MemorySegment[] scattered = f.downloadAll();
            sync.allGather(f.replicas);
            f.assertAllGathered(scattered);
            f.assertAveraged();
            sync.synchronize(f.replicas); // the average's calls and the collectives' share the synchronizer
            f.assertAveraged();
        }
    }

    /**
     * On the caller's streams, without waiting on the host: the new inputs are copied in on each
     * caller stream just before the call, and the result copied out on it just after.
     */
    @ParameterizedTest(name = "{0} GPUs, async {1}")
    @CsvSource({"2, false", "2, true", "4, true"})
    void collectivesRunInTheCallersStreamOrder(int n, boolean async) {
        List<CudaDevice> devices = GpuSet.own(n).cuda();
        List<io.gradsync.tasks.device.DeviceStream> callers = new java.util.ArrayList<>();
        List<io.gradsync.tasks.device.HostBuffer> seen = new java.util.ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices); ReplicaFixture f = sharded(devices)) {
            List<Replica> onStreams = new java.util.ArrayList<>();
            for (int r = 0; r < n; r++) {
                callers.add(devices.get(r).createStream());
                seen.add(devices.get(r).allocateHost(f.bufferBytes));
                onStreams.add(f.replicas.get(r).withStream(callers.get(r)));
            }
            for (String op : List.of("broadcast", "reduce-scatter", "all-gather")) {
                for (int r = 0; r < n; r++) { // "backward": the inputs arrive on the caller's stream
                    callers.get(r).copyFromHost(f.inputs.get(r), 0, f.buffers.get(r), 0, f.bufferBytes);
                }
                SyncHandle h = switch (op) {
                    case "broadcast" -> async ? sync.broadcastAsync(onStreams, n - 1) : call(() -> sync.broadcast(onStreams, n - 1));
                    case "reduce-scatter" -> async ? sync.reduceScatterAsync(onStreams) : call(() -> sync.reduceScatter(onStreams));
                    default -> async ? sync.allGatherAsync(onStreams) : call(() -> sync.allGather(onStreams));
                };
                for (int r = 0; r < n; r++) {
                    callers.get(r).copyToHost(f.buffers.get(r), 0, seen.get(r), 0, f.bufferBytes);
                    callers.get(r).fill32(f.buffers.get(r), 0, f.bufferBytes, 0); // later work must not reach the copy
                }
                h.await();
                for (io.gradsync.tasks.device.DeviceStream c : callers) {
                    c.synchronize();
                }
                uploadSeen(f, seen); // what the caller's streams read right after the call is what is judged
                switch (op) {
                    case "broadcast" -> f.assertBroadcast(n - 1);
                    case "reduce-scatter" -> f.assertReduceScattered();
                    default -> f.assertAllGathered(f.inputSegments());
                }
            }
        } finally {
            callers.forEach(io.gradsync.tasks.device.DeviceStream::close);
            seen.forEach(io.gradsync.tasks.device.HostBuffer::close);
        }
    }

    private static SyncHandle call(Runnable synchronous) {
        synchronous.run();
        return SyncHandle.done();
    }

    /** Puts what the caller's streams read back into the buffers, so the fixture's checks judge it. */
    private static void uploadSeen(ReplicaFixture f, List<io.gradsync.tasks.device.HostBuffer> seen) {
        for (int r = 0; r < seen.size(); r++) {
            try (io.gradsync.tasks.device.DeviceStream s = f.devices.get(r).createStream()) {
                s.copyFromHost(seen.get(r), 0, f.buffers.get(r), 0, f.bufferBytes);
                s.synchronize();
            }
        }
    }

    @Test
    void autoPicksNcclForSeveralGpus() {
        List<CudaDevice> devices = GpuSet.own(2).cuda();
        assertEquals(SyncBackend.NCCL, Synchronizers.resolveAuto(devices));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.AUTO, devices)) {
            assertEquals(SyncBackend.NCCL, sync.backend());
        }
    }

    /** NCCL refuses two ranks on one GPU; gradsync says so before calling it, and auto picks another backend. */
    @Test
    void replicasSharingAGpuAreRejectedBeforeNccl() {
        GpuSet.own(1).cuda(); // CUDA here, or a visible skip
        List<CudaDevice> shared = io.gradsync.tasks.cuda.CudaRuntime.logicalDevices(4, 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Synchronizers.create(SyncBackend.NCCL, shared));
        assertTrue(e.getMessage().contains("one GPU per rank") && e.getMessage().contains(shared.get(0).id()), e.getMessage());
        SyncBackend auto = Synchronizers.resolveAuto(shared);
        assertTrue(auto == SyncBackend.PTX || auto == SyncBackend.CPU, "auto picked " + auto);
    }

    /**
     * An asynchronous average whose handle is dropped, behind a caller stream held past the
     * timeout: close throws the call's timeout (it returned quietly, or hung in NCCL's flush);
     * held for less, close waits for the call and returns, and the handle's late await too. In a
     * process of its own ({@link NcclDroppedHandleWorker}): the abort may leave the device unusable.
     */
    @Test
    void closeReportsADroppedHandlesFailureAndWaitsForItsCall() throws Exception {
        String late = output(ProcessGroup.run(1, NcclDroppedHandleWorker.class, List.of("1000", "4000"), Map.of(), 120));
        assertTrue(late.contains("CLOSE-THREW type=SyncTimeoutException"), late);
        assertTrue(late.contains("did not complete within the 1.0 s timeout"), late);
        assertTrue(late.indexOf("QUEUED") < late.indexOf("CLOSE-THREW"), "the call returned before close: " + late);
        String inTime = output(ProcessGroup.run(1, NcclDroppedHandleWorker.class, List.of("30000", "300"), Map.of(), 120));
        assertTrue(inTime.contains("same=true"), inTime);
        assertTrue(inTime.contains("LATE-AWAIT ok"), inTime);
    }

    private static String output(List<ProcessGroup.Outcome> outcomes) {
        ProcessGroup.Outcome o = outcomes.getFirst();
        String text = "exit " + (o.timedOut() ? "TIMED OUT" : o.exitCode()) + " after " + o.millis() + " ms\n" + o.output();
        assertEquals(0, o.exitCode(), text);
        return text;
    }

    @Test
    void badInputIsRejectedBeforeNcclAndUseAfterCloseFails() {
        List<CudaDevice> devices = GpuSet.own(2).cuda();
        GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, devices);
        try (ReplicaFixture f = ReplicaFixture.flat(devices, 1000, DType.FP32, 7)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> sync.synchronize(List.of(f.replicas.get(1), f.replicas.get(0))));
            assertTrue(e.getMessage().contains("replica 0"), e.getMessage());
            f.assertUnchanged();
            sync.close();
            sync.close();
            IllegalStateException closed = assertThrows(IllegalStateException.class, () -> sync.synchronize(f.replicas));
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
            assertThrows(IllegalStateException.class, sync::barrier);
            f.assertUnchanged();
        }
    }
}
