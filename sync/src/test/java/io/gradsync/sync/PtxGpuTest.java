package io.gradsync.sync;

import io.gradsync.sync.internal.HostAverage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.cuda.CudaDevice;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ptx backend on 2 and 4 GPUs: every size class from 1 element to 64 Mi, odd lengths, every
 * dtype, through each path (one-shot, reduce-scatter with peer reads, and the host-staged path
 * taken where P2P is missing), exact against float64, replicas bit-identical; then 1,000 random
 * rounds comparing each result with the same input's previous run.
 */
@Tag("gpu")
class PtxGpuTest {
    /** The ways a run can go. */
    enum Path {
        DEFAULT(SyncOptions.defaults()),
        EAGER(SyncOptions.defaults().withPtx(PtxOptions.defaults().withGraph(false))),
        GATHER_LANES(SyncOptions.defaults().withPtx(PtxOptions.defaults().withOneShotMaxBytes(0).withGatherLanes(3))),
        ONE_SHOT(SyncOptions.defaults().withPtx(PtxOptions.defaults().withOneShotMaxBytes(Long.MAX_VALUE))),
        /** One-shot with every GPU averaging its own slices, never the first GPU alone (which logical devices of one GPU take for every one-shot call). */
        ONE_SHOT_PER_GPU(SyncOptions.defaults().withPtx(PtxOptions.defaults().withOneShotMaxBytes(Long.MAX_VALUE).withOneGpuMaxBytes(0))),
        REDUCE_SCATTER(SyncOptions.defaults().withPtx(PtxOptions.defaults().withOneShotMaxBytes(0))),
        NO_P2P(SyncOptions.defaults().withPtx(PtxOptions.defaults().withPeerAccess(false))),
        GATHER_KERNEL(SyncOptions.defaults().withPtx(PtxOptions.defaults().withOneShotMaxBytes(0)
                .withGather(PtxOptions.Gather.KERNEL)));

        final SyncOptions options;

        Path(SyncOptions options) {
            this.options = options;
        }
    }

    static Stream<Arguments> sizes() {
        long[] lengths = {1, 7, 63, 65, 1023, 4097, 65_537, 262_143, 1_000_003, 4_194_304, 16_777_217, 67_108_864};
        return Stream.of(GpuSet.own(2), GpuSet.own(4), GpuSet.shared(4)).flatMap(n -> Stream.of(Path.values()).flatMap(path -> Stream.of(DType.values())
                .flatMap(t -> java.util.Arrays.stream(lengths)
                        // the largest sizes in fp32 only: they are about bandwidth and memory, not rounding;
                        // and not on shared GPUs, whose point is the n-way schedule (the host check dominates)
                        .filter(len -> len < 16_000_000 || (t == DType.FP32 && !n.shared()))
                        .mapToObj(len -> Arguments.of(n, path, len, t)))));
    }

    @ParameterizedTest(name = "{0}, {1}, {2} x {3}")
    @MethodSource("sizes")
    void averagesExactly(GpuSet n, Path path, long length, DType dtype) {
        List<CudaDevice> devices = n.cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices, path.options);
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, ThreadLocalRandom.current().nextLong())) {
            assertEquals(SyncBackend.PTX, sync.backend());
            RepeatCheck.averagesTwice(sync, f);
        }
    }

    /** Gradients sharing one buffer: tiny, odd, empty and multi-million lengths in every dtype. */
    private static final long[] MIXED_COUNTS = {1, 5, 1000, 3, 2049, 777_777, 2, 1024, 65_536, 0, 3_000_001};
    private static final DType[] MIXED_TYPES = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32,
        DType.FP16, DType.FP32, DType.BF16, DType.FP32, DType.FP32};

    @ParameterizedTest(name = "{0}, mixed gradients, {1}")
    @MethodSource("gpuCountsAndPaths")
    void averagesManyMixedGradientsRepeatedly(GpuSet n, Path path) {
        List<CudaDevice> devices = n.cuda();
        long[] counts = MIXED_COUNTS;
        DType[] types = MIXED_TYPES;
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices, path.options);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, ThreadLocalRandom.current().nextLong())) {
            RepeatCheck.averagesTwice(sync, f);
        }
    }

    /** Sums of squares in the averaging schedule: per gradient against float64, first (enqueued) and second (recorded) call alike. */
    @ParameterizedTest(name = "{0}, sums of squares, {1}")
    @MethodSource("gpuCountsAndPaths")
    void sumsTheSquaresOfTheAveragesPerGradient(GpuSet n, Path path) {
        List<CudaDevice> devices = n.cuda();
        long[] counts = MIXED_COUNTS;
        DType[] types = MIXED_TYPES;
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices, path.options);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, ThreadLocalRandom.current().nextLong())) {
            FusedSumOfSquares fused = (FusedSumOfSquares) sync;
            double[] first = fused.synchronizeSumOfSquares(f.replicas);
            f.assertAveraged();
            java.lang.foreign.MemorySegment heap = f.download(0);
            java.lang.foreign.MemorySegment got = java.lang.foreign.Arena.ofAuto().allocate(heap.byteSize(), 64).copyFrom(heap);
            for (int g = 0; g < counts.length; g++) {
                double want = HostAverage.sumOfSquares(types[g], got.asSlice(f.offsets[g]), counts[g]);
                org.junit.jupiter.api.Assertions.assertEquals(want, first[g], 1e-12 * want, "gradient " + g);
            }
            f.restore();
            double[] second = fused.synchronizeSumOfSquares(f.replicas);
            f.assertAveraged();
            for (int g = 0; g < counts.length; g++) {
                org.junit.jupiter.api.Assertions.assertEquals(Double.doubleToRawLongBits(first[g]), Double.doubleToRawLongBits(second[g]),
                        "gradient " + g + ": the same bits every call");
            }
        }
    }

    static Stream<Arguments> gpuCountsAndPaths() {
        return Stream.of(GpuSet.own(2), GpuSet.own(4), GpuSet.shared(3), GpuSet.shared(4))
                .flatMap(n -> Stream.of(Path.values()).map(p -> Arguments.of(n, p)));
    }

    /** Races show as wrong or changing results: 1,000 rounds of random sizes across both paths. */
    @ParameterizedTest(name = "{0}, 1000 random rounds")
    @ValueSource(strings = {"2", "4", "4 shared"})
    @Timeout(value = 4, unit = TimeUnit.MINUTES) // on 2 x H200 the whole class ran in under a minute
    void thousandRandomRoundsStayExactAndDeterministic(GpuSet n) {
        List<CudaDevice> devices = n.cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices)) {
            RepeatCheck.randomRounds(sync, devices, 1000, 1 << 20, ThreadLocalRandom.current().nextLong());
        }
    }

    @ParameterizedTest(name = "{0}, 300 random rounds without P2P")
    @ValueSource(strings = {"2", "4", "4 shared"})
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void randomRoundsThroughHostMemoryStayExact(GpuSet n) {
        List<CudaDevice> devices = n.cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices, Path.NO_P2P.options)) {
            RepeatCheck.randomRounds(sync, devices, 300, 1 << 20, ThreadLocalRandom.current().nextLong());
        }
    }

    @Test
    void statsNameThePhases() {
        List<CudaDevice> devices = GpuSet.own(2).cuda();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, 1 << 20, DType.FP32, 5)) {
            sync.synchronize(f.replicas);
            sync.synchronize(f.replicas);
            assertEquals(2, sync.stats().calls());
            assertTrue(sync.stats().phases().keySet().containsAll(List.of("prepare", "enqueue", "wait")),
                    sync.stats().describe());
        }
    }
}
