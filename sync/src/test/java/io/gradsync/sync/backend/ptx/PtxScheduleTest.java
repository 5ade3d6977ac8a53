package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.backend.StreamKernels;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.RepeatCheck;
import io.gradsync.sync.Replica;
import io.gradsync.sync.ReplicaFixture;
import io.gradsync.sync.internal.HostAverage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.jvm.JvmStream;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.internal.JvmKernels;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ptx backend's schedule (slices, one-shot, events, host staging where P2P is missing) run on
 * JVM devices, whose streams are worker threads: kernels run as their Java bodies, and "peer
 * access" is plain host memory. What this checks is the ordering and the offsets; PtxGpuTest
 * checks the same on GPUs with the PTX kernels.
 */
class PtxScheduleTest {
    private List<JvmDevice> devices = List.of();

    @AfterEach
    void closeDevices() {
        devices.forEach(JvmDevice::close);
    }

    /** The peer matrices to try: all pairs, none, and device 0 cut off from the last one. */
    enum Peers {
        ALL, NONE, PARTIAL;

        boolean[][] matrix(int n) {
            boolean[][] m = new boolean[n][n];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    m[i][j] = i == j || this == ALL || (this == PARTIAL && !((i == 0 && j == n - 1) || (j == 0 && i == n - 1)));
                }
            }
            return m;
        }
    }

    /** Kernels as Java on the stream's worker thread, arrays viewing the JVM buffers' memory. */
    static PtxLaunches.Launcher jvmKernels() {
        return (device, spec, count, args) -> StreamKernels.onJvm(spec, count, args)::launch;
    }

    private PtxSynchronizer schedule(int n, Peers peers, long oneShotMaxBytes) {
        return schedule(n, peers, PtxOptions.defaults().withOneShotMaxBytes(oneShotMaxBytes));
    }

    /** A recorder whose replay enqueues the schedule again (what a graph launch is to JVM streams). */
    static PtxLaunches.Recorder enqueueAgain() {
        return (origin, enqueue) -> new PtxLaunches.Replay() {
            @Override
            public void replay(io.gradsync.tasks.device.DeviceStream stream) {
                enqueue.run();
            }

            @Override
            public void close() {
            }
        };
    }

    /** Schedules recorded so far by {@link #jvmRecorder}. */
    private final AtomicInteger recordings = new AtomicInteger();

    /**
     * What a CUDA graph is to the GPUs: the schedule enqueued once per layout as one piece (fork
     * from stream 0, join back), replayed per call. On JVM streams a replay enqueues it again.
     */
    private PtxLaunches.Recorder jvmRecorder() {
        return (origin, enqueue) -> {
            recordings.incrementAndGet();
            return new PtxLaunches.Replay() {
                @Override
                public void replay(io.gradsync.tasks.device.DeviceStream stream) {
                    assertEquals(origin, stream, "replayed behind the stream it was recorded from");
                    enqueue.run();
                }

                @Override
                public void close() {
                }
            };
        };
    }

    /**
     * Gradients sharing one buffer: empty, tiny and odd lengths in every dtype, and one (600_001)
     * large enough that its sum of squares takes two stages (partials added down on the device).
     */
    private static final long[] MIXED_COUNTS = {1, 5, 1000, 3, 2049, 77_777, 2, 1024, 0, 129, 600_001};
    private static final DType[] MIXED_TYPES = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP32,
        DType.FP16, DType.FP32, DType.BF16, DType.FP16, DType.FP32};

    private PtxSynchronizer schedule(int n, Peers peers, PtxOptions options) {
        devices = JvmRuntime.createDevices(n);
        return new PtxSynchronizer(devices, options, peers.matrix(n), jvmKernels(), options.graph() ? jvmRecorder() : null, true, DType.FP32);
    }

    /** Reduce-scatter always; one-shot always, by GPU 0 alone up to the default size; one-shot always, by every GPU. */
    private static final List<PtxOptions> PATHS = List.of(PtxOptions.defaults().withOneShotMaxBytes(0),
            PtxOptions.defaults().withOneShotMaxBytes(Long.MAX_VALUE),
            PtxOptions.defaults().withOneShotMaxBytes(Long.MAX_VALUE).withOneGpuMaxBytes(0));

    static Stream<Arguments> shapes() {
        return Stream.of(1, 2, 3, 4).flatMap(n -> Stream.of(Peers.values()).flatMap(p -> PATHS.stream()
                .flatMap(o -> Stream.of(1L, 63L, 65L, 1023L, 4099L, 30_001L)
                        .flatMap(len -> Stream.of(DType.values()).map(t -> Arguments.of(n, p, o, len, t))))));
    }

    @ParameterizedTest(name = "N={0} peers={1} {2}, {3} x {4}")
    @MethodSource("shapes")
    void averagesExactly(int n, Peers peers, PtxOptions options, long length, DType dtype) {
        try (PtxSynchronizer sync = schedule(n, peers, options);
                ReplicaFixture f = ReplicaFixture.flat(devices, length, dtype, seed())) {
            RepeatCheck.averagesTwice(sync, f);
        }
    }

    /**
     * Up to {@link PtxOptions#oneGpuMaxBytes()} per replica in all, every run one-shot and every pair
     * with P2P, GPU 0 launches every kernel of the call (each over a whole run, for every replica);
     * above it, or without P2P everywhere, each GPU launches its own slice's.
     */
    @ParameterizedTest(name = "N={0} peers={1} one GPU up to {2} B")
    @MethodSource("oneGpuShapes")
    void averagesSmallCallsOnTheFirstGpuAlone(int n, Peers peers, long oneGpuMaxBytes) {
        int[] launches = new int[n];
        PtxLaunches.Launcher counting = (device, spec, count, args) -> {
            PtxLaunches.Launch l = jvmKernels().prepare(device, spec, count, args);
            return stream -> {
                launches[device]++;
                l.launch(stream);
            };
        };
        devices = JvmRuntime.createDevices(n);
        PtxOptions o = PtxOptions.defaults().withOneGpuMaxBytes(oneGpuMaxBytes);
        long[] counts = {1, 5, 1000, 3, 2049, 0, 129}; // 6 runs, 13,454 bytes per replica
        DType[] types = {DType.FP32, DType.BF16, DType.FP16, DType.FP32, DType.BF16, DType.FP16, DType.FP32};
        try (PtxSynchronizer sync = new PtxSynchronizer(devices, o, peers.matrix(n), counting, jvmRecorder(), true, DType.FP32);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
            RepeatCheck.averagesTwice(sync, f);
            boolean alone = peers == Peers.ALL && oneGpuMaxBytes >= 6_640;
            assertTrue(launches[0] > 0, "GPU 0 launched nothing");
            for (int i = 1; i < n; i++) {
                assertEquals(alone, launches[i] == 0, "GPU " + i + " launched " + launches[i] + " kernels");
            }
        }
    }

    static Stream<Arguments> oneGpuShapes() {
        return Stream.of(2, 3, 4).flatMap(n -> Stream.of(Peers.ALL, Peers.PARTIAL)
                .flatMap(p -> Stream.of(0L, 6_639L, 6_640L).map(b -> Arguments.of(n, p, b))));
    }

    @ParameterizedTest(name = "peers={0}")
    @MethodSource("peerKinds")
    void averagesMixedGradientsWithBothPathsInOneCall(Peers peers) {
        long[] counts = MIXED_COUNTS;
        DType[] types = MIXED_TYPES;
        // runs up to 4 KiB one-shot, the larger ones reduce-scatter, in the same call
        try (PtxSynchronizer sync = schedule(4, peers, 4096);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
            RepeatCheck.averagesTwice(sync, f);
        }
    }

    /** The all-gather by copy kernels reading the peers, every dtype, with a peer missing too. */
    @ParameterizedTest(name = "N={0} peers={1} {2}")
    @MethodSource("gatherShapes")
    void gatherByKernelAveragesExactly(int n, Peers peers, DType dtype) {
        PtxOptions byKernel = PtxOptions.defaults().withOneShotMaxBytes(0).withGather(PtxOptions.Gather.KERNEL);
        try (PtxSynchronizer sync = schedule(n, peers, byKernel)) {
            RepeatCheck.randomRounds(sync, devices, 4, 20_000, seed());
            try (ReplicaFixture f = ReplicaFixture.flat(devices, 10_007, dtype, seed())) {
                sync.synchronize(f.replicas);
                f.assertAveraged();
                RepeatCheck.assertReplicasIdentical(f);
            }
        }
    }

    static Stream<Arguments> gatherShapes() {
        return Stream.of(2, 4).flatMap(n -> Stream.of(Peers.ALL, Peers.PARTIAL)
                .flatMap(p -> Stream.of(DType.values()).map(t -> Arguments.of(n, p, t))));
    }

    static Stream<Peers> peerKinds() {
        return Stream.of(Peers.values());
    }

    @ParameterizedTest(name = "N={0}")
    @ValueSource(ints = {2, 3, 4})
    void randomRoundsAreExactAndDeterministic(int n) {
        try (PtxSynchronizer sync = schedule(n, n == 3 ? Peers.PARTIAL : Peers.ALL, 8192)) {
            RepeatCheck.randomRounds(sync, devices, 20, 50_000, seed());
        }
    }

    @Test
    void rejectsBadInputsAndAsymmetricPeerMatrices() {
        try (PtxSynchronizer sync = schedule(2, Peers.ALL, 0);
                ReplicaFixture f = new ReplicaFixture(devices, new long[] {100}, new DType[] {DType.FP32}, 3)) {
            List<Replica> bad = List.of(f.replicas.get(0), new Replica(devices.get(1), List.of(
                    new Gradient("grad0", f.buffers.get(1), f.offsets[0], 99, DType.FP32))));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sync.synchronize(bad));
            assertTrue(e.getMessage().contains("99 elements"), e.getMessage());
            f.assertUnchanged();
            assertTrue(sync.peerToPeer(0, 1));
        }
        boolean[][] asymmetric = {{true, true}, {false, true}};
        assertThrows(IllegalArgumentException.class,
                () -> new PtxSynchronizer(devices, PtxOptions.defaults(), asymmetric, jvmKernels(), null, true, DType.FP32));
    }

    /** The all-gather on several lanes per GPU (copies and copy kernels), with and without P2P everywhere. */
    @ParameterizedTest(name = "N={0} peers={1} lanes={2} gather={3}")
    @MethodSource("laneShapes")
    void gatherOnSeveralLanesAveragesExactly(int n, Peers peers, int lanes, PtxOptions.Gather how) {
        PtxOptions o = PtxOptions.defaults().withOneShotMaxBytes(0).withGatherLanes(lanes).withGather(how);
        try (PtxSynchronizer sync = schedule(n, peers, o)) {
            RepeatCheck.randomRounds(sync, devices, 6, 30_000, seed());
        }
    }

    static Stream<Arguments> laneShapes() {
        return Stream.of(3, 4).flatMap(n -> Stream.of(Peers.ALL, Peers.PARTIAL).flatMap(p -> Stream.of(2, 3, 7)
                .flatMap(l -> Stream.of(PtxOptions.Gather.values()).map(g -> Arguments.of(n, p, l, g)))));
    }

    /**
     * The sums of squares in the averaging schedule: per gradient, the float64 sum over its
     * averaged values (gradients sharing a buffer kept apart), the same bits on the first (enqueued)
     * and the second (recorded) call, with one-shot, reduce-scatter and host-staged slices, small
     * gradients summed in one stage and large ones in two.
     */
    @ParameterizedTest(name = "N={0} peers={1} one-shot up to {2} B")
    @MethodSource("squareShapes")
    void sumsTheSquaresOfTheAveragesPerGradient(int n, Peers peers, long oneShot) {
        long[] counts = MIXED_COUNTS;
        DType[] types = MIXED_TYPES;
        try (PtxSynchronizer sync = schedule(n, peers, oneShot);
                ReplicaFixture f = new ReplicaFixture(devices, counts, types, seed())) {
            double[] first = sync.synchronizeSumOfSquares(f.replicas);
            f.assertAveraged();
            MemorySegment heap = f.download(0);
            MemorySegment got = java.lang.foreign.Arena.ofAuto().allocate(heap.byteSize(), 64).copyFrom(heap);
            assertEquals(counts.length, first.length);
            for (int g = 0; g < counts.length; g++) {
                double want = HostAverage.sumOfSquares(types[g], got.asSlice(f.offsets[g]), counts[g]);
                assertEquals(want, first[g], 1e-12 * want, "gradient " + g + " (" + counts[g] + " x " + types[g] + ")");
            }
            f.restore();
            double[] second = sync.synchronizeSumOfSquares(f.replicas); // recorded this time
            f.assertAveraged();
            for (int g = 0; g < counts.length; g++) {
                assertEquals(Double.doubleToRawLongBits(first[g]), Double.doubleToRawLongBits(second[g]), "gradient " + g);
            }
            f.restore();
            sync.synchronize(f.replicas); // and the plain schedule of the same buffers still averages
            f.assertAveraged();
        }
    }

    static Stream<Arguments> squareShapes() {
        return Stream.of(2, 3, 4).flatMap(n -> Stream.of(Peers.values()).flatMap(p -> Stream.of(0L, 4096L, Long.MAX_VALUE)
                .map(o -> Arguments.of(n, p, o))));
    }

    /**
     * fp32 on a 16-bit wire inside the schedule (sends into the owners' wire buffers, the 16-bit
     * average, widening pulls) against the wire around the same schedule (narrowing into scratch,
     * the 16-bit average, widening back): the same bytes in every replica, with 16-bit gradients in
     * the same layout going as they are, runs that would be one-shot, copies and copy kernels,
     * enqueued and recorded; and the sums of squares of what the fused call wrote.
     */
    @ParameterizedTest(name = "N={0} {1} wire, gather={2}, reduce-scatter {3}")
    @MethodSource("fusedWireShapes")
    void theFusedWireGivesTheWireAroundItsBytes(int n, DType wire, PtxOptions.Gather how, boolean scatter) {
        PtxOptions o = PtxOptions.defaults().withOneShotMaxBytes(4096).withGather(how).withGatherLanes(2);
        List<JvmDevice> mine = JvmRuntime.createDevices(n);
        List<JvmDevice> theirs = JvmRuntime.createDevices(n);
        devices = java.util.stream.Stream.concat(mine.stream(), theirs.stream()).toList();
        try (PtxSynchronizer fused = new PtxSynchronizer(mine, o, Peers.ALL.matrix(n), jvmKernels(), jvmRecorder(), true, wire);
                var around = new io.gradsync.sync.backend.wire.WireSynchronizer(
                        new PtxSynchronizer(theirs, o, Peers.ALL.matrix(n), jvmKernels(), jvmRecorder(), true, DType.FP32), wire, theirs, true)) {
            assertFusedWireGivesTheWireAround(fused, around, mine, theirs, scatter, seed());
        }
    }

    /**
     * Three calls of {@code fused} (its wire inside the schedule, on {@code mine}) and of
     * {@code around} (the wire around ptx, on {@code theirs}) over the mixed layout from one seed:
     * the same bytes in every replica; the third average collects the sums of squares of what the
     * fused call wrote; and the fp32 averages are 16-bit values widened.
     */
    static void assertFusedWireGivesTheWireAround(PtxSynchronizer fused, GradientSynchronizer around, List<? extends Device> mine,
            List<? extends Device> theirs, boolean scatter, long seed) {
        DType wire = fused.wire();
        assertTrue(wire != DType.FP32, "the wire is fused");
        int n = mine.size();
        try (ReplicaFixture f = new ReplicaFixture(mine, MIXED_COUNTS, MIXED_TYPES, seed);
                ReplicaFixture g = new ReplicaFixture(theirs, MIXED_COUNTS, MIXED_TYPES, seed)) {
            for (int call = 0; call < 3; call++) { // the second and third replay the recorded schedule
                f.restore();
                g.restore();
                if (scatter) {
                    fused.reduceScatter(f.replicas);
                    around.reduceScatter(g.replicas);
                } else if (call == 2) {
                    double[] squares = fused.synchronizeSumOfSquares(f.replicas);
                    around.synchronize(g.replicas);
                    MemorySegment heap = f.download(0);
                    MemorySegment got = java.lang.foreign.Arena.ofAuto().allocate(heap.byteSize(), 64).copyFrom(heap);
                    for (int k = 0; k < MIXED_COUNTS.length; k++) {
                        double want = HostAverage.sumOfSquares(MIXED_TYPES[k], got.asSlice(f.offsets[k]), MIXED_COUNTS[k]);
                        assertEquals(want, squares[k], 1e-12 * want, "squares of gradient " + k);
                    }
                } else {
                    fused.synchronize(f.replicas);
                    around.synchronize(g.replicas);
                }
                for (int r = 0; r < n; r++) {
                    long at = f.download(r).mismatch(g.download(r));
                    int rr = r;
                    int c = call;
                    assertEquals(-1, at, () -> "call " + c + ", replica " + rr + ": the fused wire differs at byte " + at + " (seed " + seed + ")");
                }
            }
            if (!scatter) { // fp32 gradient 5's averages crossed the wire: each is a 16-bit value widened
                f.restore();
                fused.synchronize(f.replicas);
                MemorySegment got = f.download(0);
                for (long e = 0; e < MIXED_COUNTS[5]; e++) {
                    float v = got.get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, f.offsets[5] + 4 * e);
                    float back = wire == DType.BF16 ? Float.intBitsToFloat(Float.floatToRawIntBits(v) & 0xFFFF0000)
                            : Float.float16ToFloat(Float.floatToFloat16(v));
                    assertEquals(Float.floatToRawIntBits(back), Float.floatToRawIntBits(v), "element " + e + " is no " + wire + " value");
                }
            }
        }
    }

    /** Where some pair has no P2P, or there is one replica, the wire is not fused: Synchronizers then puts it around ptx. */
    @Test
    void theWireIsFusedOnlyWithP2pEverywhere() {
        devices = JvmRuntime.createDevices(3);
        for (Peers peers : Peers.values()) {
            try (PtxSynchronizer sync = new PtxSynchronizer(devices, PtxOptions.defaults(), peers.matrix(3), jvmKernels(), null, true, DType.FP16)) {
                assertEquals(peers == Peers.ALL ? DType.FP16 : DType.FP32, sync.wire(), peers.name());
            }
        }
        try (PtxSynchronizer one = new PtxSynchronizer(devices.subList(0, 1), PtxOptions.defaults(), Peers.ALL.matrix(1), jvmKernels(), null, true,
                DType.BF16)) {
            assertEquals(DType.FP32, one.wire(), "one replica: nothing crosses a wire");
        }
    }

    static Stream<Arguments> fusedWireShapes() {
        return Stream.of(2, 3, 4).flatMap(n -> Stream.of(DType.BF16, DType.FP16).flatMap(w -> Stream.of(PtxOptions.Gather.values())
                .flatMap(g -> Stream.of(false, true).map(sc -> Arguments.of(n, w, g, sc)))));
    }

    /** Without recording, every operation is enqueued every call: the same results. */
    @ParameterizedTest(name = "N={0} peers={1}")
    @MethodSource("eagerShapes")
    void eagerScheduleAveragesExactly(int n, Peers peers) {
        try (PtxSynchronizer sync = schedule(n, peers, PtxOptions.defaults().withOneShotMaxBytes(4096).withGraph(false))) {
            RepeatCheck.randomRounds(sync, devices, 6, 20_000, seed());
        }
        assertEquals(0, recordings.get());
    }

    static Stream<Arguments> eagerShapes() {
        return Stream.of(2, 3, 4).flatMap(n -> Stream.of(Peers.values()).map(p -> Arguments.of(n, p)));
    }

    /** One recording per layout: calls with the same buffers replay it, alternating layouts are remembered. */
    @Test
    void recordsOncePerLayout() {
        try (PtxSynchronizer sync = schedule(3, Peers.ALL, 4096);
                ReplicaFixture a = ReplicaFixture.flat(devices, 70_001, DType.BF16, seed());
                ReplicaFixture b = ReplicaFixture.flat(devices, 999, DType.FP32, seed())) {
            a.restore();
            sync.synchronize(a.replicas);
            a.assertAveraged();
            assertEquals(0, recordings.get(), "a layout's first call is enqueued directly");
            for (int call = 0; call < 3; call++) {
                a.restore();
                sync.synchronize(a.replicas);
                a.assertAveraged();
            }
            assertEquals(1, recordings.get(), "recorded on its second call, replayed after");
            // a bucket pattern: two layouts in turn. The first switch may grow scratch memory,
            // which drops what was remembered (it pointed into the old scratch); after that, none.
            for (int call = 0; call < 2; call++) {
                b.restore();
                sync.synchronize(b.replicas);
                a.restore();
                sync.synchronize(a.replicas);
            }
            int warm = recordings.get();
            assertTrue(warm <= 3, warm + " recordings");
            for (int call = 0; call < 3; call++) {
                b.restore();
                sync.synchronize(b.replicas);
                b.assertAveraged();
                a.restore();
                sync.synchronize(a.replicas);
                a.assertAveraged();
            }
            assertEquals(warm, recordings.get(), "alternating layouts replay what they recorded");
        }
    }

    /** More layouts than are remembered: none comes back in time to be recorded, results stay exact. */
    @Test
    void forgetsTheOldestLayoutBeyondTheCache() {
        int layouts = PtxLayouts.CACHED_LAYOUTS + 2;
        List<ReplicaFixture> fixtures = new java.util.ArrayList<>();
        try (PtxSynchronizer sync = schedule(2, Peers.ALL, 4096)) {
            for (int i = 0; i < layouts; i++) {
                fixtures.add(ReplicaFixture.flat(devices, 100 + i, DType.FP32, seed()));
            }
            for (int round = 0; round < 2; round++) {
                for (ReplicaFixture f : fixtures) {
                    f.restore();
                    sync.synchronize(f.replicas);
                    f.assertAveraged();
                }
            }
            // each layout is dropped before it comes back, so each call is its layout's first: enqueued, never recorded
            assertEquals(0, recordings.get(), "layouts that do not come back within the cache are not recorded");
        } finally {
            fixtures.forEach(ReplicaFixture::close);
        }
    }

    @Test
    void statsNameThePhases() {
        try (PtxSynchronizer sync = schedule(3, Peers.PARTIAL, 0);
                ReplicaFixture f = ReplicaFixture.flat(devices, 5000, DType.FP32, 9)) {
            sync.synchronize(f.replicas);
            assertEquals(1, sync.stats().calls());
            assertEquals(20_000, sync.stats().bytes());
            assertTrue(sync.stats().phases().keySet().containsAll(List.of("prepare", "enqueue", "wait")));
        }
    }

    private static long seed() {
        return ThreadLocalRandom.current().nextLong();
    }
}
