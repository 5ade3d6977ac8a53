package io.gradsync.sync;

import io.gradsync.sync.backend.ptx.PtxOnJvm;
import io.gradsync.sync.backend.LocalHandles;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.jvm.JvmStream;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The caller's memory and streams on JVM devices (and PoCL for opencl): gradients in segments the
 * caller allocated, produced by work on the caller's streams, averaged with no device-wide wait
 * ({@code waitForCaller} off, so only the stream events order the work), and consumed by work the
 * caller queues right after the call.
 */
class CallerStreamsTest {
    private static final int N = 1 << 16;
    private final List<Device> toClose = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        toClose.forEach(Device::close);
        arena.close();
    }

    /** A backend over n fresh devices, the caller's work on each device's stream never waited for by the host. */
    record Backend(String name, BiFunction<Integer, List<Device>, GradientSynchronizer> make) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> backends() {
        SyncOptions noDeviceWait = SyncOptions.defaults().withWaitForCaller(false).withChunkBytes(64 << 10);
        return Stream.of(
                Arguments.of(new Backend("cpu", (n, d) -> Synchronizers.create(SyncBackend.CPU, d, noDeviceWait)), false),
                Arguments.of(new Backend("ptx schedule", (n, d) -> PtxOnJvm.schedule(d, PtxOptions.defaults(),
                        false, false)), false),
                Arguments.of(new Backend("ptx schedule, recorded", (n, d) -> PtxOnJvm.schedule(d, PtxOptions.defaults()
                        .withOneShotMaxBytes(0), true, false)), false),
                Arguments.of(new Backend("opencl", (n, d) -> Synchronizers.create(SyncBackend.OPENCL, d, noDeviceWait)), true));
    }

    private List<Device> devices(int n, boolean opencl) {
        List<Device> d = new ArrayList<>();
        if (opencl) {
            assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
            d.addAll(OpenClRuntime.logicalDevices(n));
        } else {
            d.addAll(JvmRuntime.createDevices(n));
        }
        toClose.addAll(d);
        return d;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void averageIsOrderedBetweenTheCallersWorkOnItsStreams(Backend backend, boolean opencl) throws Exception {
        int n = 3;
        List<Device> devices = devices(n, opencl);
        try (GradientSynchronizer sync = backend.make().apply(n, devices)) {
            for (int round = 0; round < 3; round++) {
                CallerStreamSetup s = new CallerStreamSetup(devices, round);
                // the caller's "backward" finishes only once released after the call has returned: the sync
                // must wait for it on the device, not see the poison. The fallback releases it should the
                // call (wrongly) wait for it on the host, so that the test fails instead of hanging.
                Thread fallback = Thread.ofPlatform().daemon().start(() -> {
                    sleep(30_000);
                    s.release.countDown();
                });
                SyncHandle h = sync.synchronizeAsync(s.replicas);
                boolean returnedBeforeRelease = s.release.getCount() > 0;
                boolean doneBeforeRelease = h.isDone();
                s.consumeAfter();
                s.release.countDown();
                if (!opencl) { // cpu too: its host pipeline runs in the background, the caller's streams wait on the device
                    assertTrue(returnedBeforeRelease, "the call waited on the host for the caller's work (it returned only after the release)");
                    assertFalse(doneBeforeRelease, "done before the caller's work it follows");
                }
                fallback.interrupt();
                assertTrue(s.consumed.await(30, TimeUnit.SECONDS), "the caller's stream ran on after the average");
                h.await();
                assertTrue(h.isDone());
                s.assertConsumedTheAverage();
                s.close();
            }
        }
    }

    /**
     * A synchronous {@code cpu} call on JVM devices averages host memory in place: it waits on the
     * host for the work queued on the caller's streams first ("backward" blocked until released
     * 100 ms after the call began), and the caller's next work sees the average.
     */
    @Test
    void synchronousCpuCallWaitsForTheCallersStreamsThenAveragesInPlace() throws Exception {
        int n = 3;
        List<Device> devices = devices(n, false);
        SyncOptions noDeviceWait = SyncOptions.defaults().withWaitForCaller(false);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, noDeviceWait)) {
            for (int round = 0; round < 2; round++) {
                CallerStreamSetup s = new CallerStreamSetup(devices, round);
                Thread releaser = Thread.ofPlatform().daemon().start(() -> {
                    sleep(100);
                    s.release.countDown();
                });
                sync.synchronize(s.replicas);
                assertEquals(0, s.release.getCount(), "the call returned before the caller's work it averages");
                s.consumeAfter();
                assertTrue(s.consumed.await(30, TimeUnit.SECONDS), "the caller's stream ran on after the average");
                s.assertConsumedTheAverage();
                releaser.join();
                s.close();
            }
            assertTrue(sync.stats().phases().containsKey("in place"), () -> "not averaged in place: " + sync.stats().phases().keySet());
        }
    }

    /**
     * Per device: the caller's stream, a gradient in its buffer, "backward" on the stream blocked
     * until {@link #release} (then writing {@code r + round}), and "optimizer" work queued after
     * the call that copies what it finds. JVM devices use their streams; opencl ones queue copies.
     */
    private final class CallerStreamSetup implements AutoCloseable {
        final List<Replica> replicas = new ArrayList<>();
        final List<DeviceStream> streams = new ArrayList<>();
        final List<io.gradsync.tasks.device.DeviceBuffer> buffers = new ArrayList<>();
        final List<io.gradsync.tasks.device.HostBuffer> seen = new ArrayList<>();
        final List<io.gradsync.tasks.device.HostBuffer> staged = new ArrayList<>();
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch consumed;
        final int round;
        final int n;

        CallerStreamSetup(List<Device> devices, int round) {
            this.round = round;
            this.n = devices.size();
            this.consumed = new CountDownLatch(n);
            for (int r = 0; r < n; r++) {
                Device d = devices.get(r);
                DeviceStream st = d.createStream();
                io.gradsync.tasks.device.DeviceBuffer b = d instanceof JvmDevice jvm
                        ? jvm.wrap(arena.allocate((long) N * 4, 64)) : d.allocate((long) N * 4);
                io.gradsync.tasks.device.HostBuffer host = d.allocateHost((long) N * 4);
                for (long i = 0; i < N; i++) {
                    host.segment().setAtIndex(ValueLayout.JAVA_FLOAT, i, Float.NaN); // poisoned until "backward" writes
                }
                st.copyFromHost(host, 0, b, 0, (long) N * 4);
                blockUntilReleased(st);
                float value = r + round;
                for (long i = 0; i < N; i++) {
                    host.segment().setAtIndex(ValueLayout.JAVA_FLOAT, i, value);
                }
                // "backward": after the release, the stream writes the gradient (staged in host memory above;
                // the copy runs only once the stream gets there)
                io.gradsync.tasks.device.HostBuffer grad = d.allocateHost((long) N * 4);
                grad.segment().copyFrom(host.segment());
                st.copyFromHost(grad, 0, b, 0, (long) N * 4);
                seen.add(grad);
                staged.add(host); // closed with the setup: the stream's copies from it may not have run yet
                streams.add(st);
                buffers.add(b);
                replicas.add(Replica.on(d).add("w", b, DType.FP32).stream(st).build());
            }
        }

        /** Work on the stream that returns only after {@link #release}: a JVM stream task, or an OpenCL wait on a marker. */
        private void blockUntilReleased(DeviceStream st) {
            if (st instanceof JvmStream jvm) {
                jvm.submit(() -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            // opencl: queues cannot be blocked from Java; the ordering there rests on the events alone
        }

        /** The caller's next work on each stream: copy the gradient out (it must see the average). */
        void consumeAfter() {
            for (int r = 0; r < n; r++) {
                DeviceStream st = streams.get(r);
                st.copyToHost(buffers.get(r), 0, seen.get(r), 0, (long) N * 4);
                int rr = r;
                if (st instanceof JvmStream jvm) {
                    jvm.submit(consumed::countDown);
                } else {
                    new Thread(() -> {
                        st.synchronize();
                        consumed.countDown();
                    }).start();
                }
            }
        }

        void assertConsumedTheAverage() {
            float expected = (float) ((n - 1) / 2.0 + round);
            for (int r = 0; r < n; r++) {
                MemorySegment s = seen.get(r).segment();
                for (long i = 0; i < N; i += 997) {
                    assertEquals(expected, s.getAtIndex(ValueLayout.JAVA_FLOAT, i), "replica " + r + " element " + i);
                }
            }
        }

        @Override
        public void close() {
            streams.forEach(DeviceStream::synchronize);
            streams.forEach(DeviceStream::close);
            buffers.forEach(io.gradsync.tasks.device.DeviceBuffer::close);
            seen.forEach(io.gradsync.tasks.device.HostBuffer::close);
            staged.forEach(io.gradsync.tasks.device.HostBuffer::close);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void wrappedSegmentsAreAveragedInPlaceAndNeverFreed() {
        List<Device> devices = devices(2, false);
        MemorySegment[] mine = {arena.allocate(1024 * 4, 16), arena.allocate(1024 * 4, 16)};
        for (int r = 0; r < 2; r++) {
            for (int i = 0; i < 1024; i++) {
                mine[r].setAtIndex(ValueLayout.JAVA_FLOAT, i, r * 2 + i);
            }
        }
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices)) {
            List<Replica> replicas = new ArrayList<>();
            List<JvmBuffer> wrapped = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                JvmBuffer b = ((JvmDevice) devices.get(r)).wrap(mine[r]);
                assertFalse(b.isOwned());
                assertEquals(mine[r].address(), b.address());
                wrapped.add(b);
                replicas.add(Replica.on(devices.get(r)).add("w", b, DType.FP32).build());
            }
            sync.synchronize(replicas);
            wrapped.forEach(JvmBuffer::close);
        }
        for (int r = 0; r < 2; r++) {
            for (int i = 0; i < 1024; i++) {
                assertEquals(1 + i, mine[r].getAtIndex(ValueLayout.JAVA_FLOAT, i), 0f); // readable: not freed
            }
        }
    }

    @Test
    void gradsyncsOwnBuffersExposeTheirAddress() {
        JvmDevice d = (JvmDevice) devices(1, false).getFirst();
        try (JvmBuffer b = d.allocate(4096)) {
            assertTrue(b.isOwned());
            assertEquals(b.segment().address(), b.address());
            Gradient g = new Gradient("g", b, 256, 10, DType.FP32);
            assertEquals(b.address() + 256, g.address());
        }
    }

    @Test
    void wrapRejectsSegmentsItCannotUse() {
        JvmDevice d = (JvmDevice) devices(1, false).getFirst();
        assertMessage(() -> d.wrap(MemorySegment.ofArray(new float[16])), "Java heap");
        assertMessage(() -> d.wrap(arena.allocate(0)), "empty");
        assertMessage(() -> d.wrap(arena.allocate(64).asReadOnly()), "read-only");
        try (Arena confined = Arena.ofConfined()) {
            assertMessage(() -> d.wrap(confined.allocate(64)), "confined");
        }
        Arena closed = Arena.ofShared();
        MemorySegment gone = closed.allocate(64);
        closed.close();
        assertMessage(() -> d.wrap(gone), "closed");
        d.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> d.wrap(arena.allocate(64)));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void misalignedWrappedGradientsAreRejected() {
        JvmDevice d = (JvmDevice) devices(1, false).getFirst();
        MemorySegment odd = arena.allocate(4096, 16).asSlice(2);
        JvmBuffer b = d.wrap(odd);
        new Gradient("half", b, 0, 10, DType.BF16); // 2-byte elements at a 2-byte boundary: fine
        assertMessage(() -> new Gradient("w", b, 0, 10, DType.FP32), "aligned");
    }

    @Test
    void aStreamOfAnotherDeviceOrAClosedOneIsRejectedBeforeAnythingMoves() {
        List<Device> devices = devices(2, false);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, 1000, DType.FP32, 7)) {
            DeviceStream other = devices.get(1).createStream();
            assertMessage(() -> f.replicas.getFirst().withStream(other), "stream of jvm:1");
            DeviceStream closed = devices.get(0).createStream();
            closed.close();
            List<Replica> bad = List.of(f.replicas.get(0).withStream(closed), f.replicas.get(1));
            assertMessage(() -> sync.synchronize(bad), "stream is closed");
            assertMessage(() -> sync.synchronizeAsync(bad), "stream is closed");
            f.assertUnchanged();
            other.close();
        }
    }

    @Test
    void overlappingGradientsAreRejectedNamingBoth() {
        List<Device> devices = devices(2, false);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, 1000, DType.FP32, 3)) {
            List<Replica> bad = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                var buffer = f.buffers.get(r);
                bad.add(Replica.on(devices.get(r)).add(new Gradient("a", buffer, 64, 500, DType.FP32))
                        .add(new Gradient("b", buffer, 64 + 4 * 499, 100, DType.FP32)).build());
            }
            assertMessage(() -> sync.synchronize(bad), "'a' and 'b' overlap (4 bytes");
            // two wrappers of one segment alias it: found by address
            MemorySegment seg = arena.allocate(4096, 64);
            JvmBuffer w1 = ((JvmDevice) devices.get(0)).wrap(seg);
            JvmBuffer w2 = ((JvmDevice) devices.get(0)).wrap(seg.asSlice(1024));
            List<Replica> aliased = List.of(Replica.on(devices.get(0)).add(new Gradient("x", w1, 0, 512, DType.FP32))
                    .add(new Gradient("y", w2, 0, 16, DType.FP32)).build(),
                    Replica.on(devices.get(1)).add(new Gradient("x", f.buffers.get(1), 0, 512, DType.FP32))
                            .add(new Gradient("y", f.buffers.get(1), 4 * 512, 16, DType.FP32)).build());
            assertMessage(() -> sync.synchronize(aliased), "'x' and 'y' overlap");
            f.assertUnchanged();
        }
    }

    /** Replica 1's gradient starts 1,024 elements into replica 0's: rejected, naming both, nothing moved. */
    @ParameterizedTest(name = "async {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void replicasThatShareMemoryAreRejectedNamingBoth(boolean async) {
        List<Device> devices = devices(2, false);
        int count = 4096;
        MemorySegment seg = arena.allocate(4L * (count + 1024), 64);
        for (long i = 0; i < count + 1024; i++) {
            seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        }
        MemorySegment before = Arena.ofAuto().allocate(seg.byteSize()).copyFrom(seg);
        List<Replica> replicas = List.of(
                Replica.on(devices.get(0)).add("w", ((JvmDevice) devices.get(0)).wrap(seg.asSlice(0, 4L * count)), DType.FP32).build(),
                Replica.on(devices.get(1)).add("w", ((JvmDevice) devices.get(1)).wrap(seg.asSlice(4L * 1024, 4L * count)), DType.FP32).build());
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices)) {
            assertMessage(() -> {
                if (async) {
                    sync.synchronizeAsync(replicas).await();
                } else {
                    sync.synchronize(replicas);
                }
            }, "gradient 'w' of replica 0 (jvm:0) and gradient 'w' of replica 1 (jvm:1) overlap (12288 bytes in common)");
        }
        assertEquals(-1L, seg.mismatch(before), "a rejected call moved data");
    }

    /** A wrapped segment whose arena was closed is refused before anything moves (it would be read as zeros). */
    @ParameterizedTest(name = "async {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void aClosedArenaIsRefusedBeforeAnythingMoves(boolean async) {
        List<Device> devices = devices(3, false);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, 300_000, DType.FP32, 5)) {
            Arena gone = Arena.ofShared();
            MemorySegment seg = gone.allocate(4L * 300_000, 64);
            List<Replica> replicas = new ArrayList<>(f.replicas);
            replicas.set(1, Replica.on(devices.get(1)).add(f.replicas.get(1).gradients().getFirst().name(),
                    ((JvmDevice) devices.get(1)).wrap(seg), DType.FP32).build());
            gone.close();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> {
                if (async) {
                    sync.synchronizeAsync(replicas).await();
                } else {
                    sync.synchronize(replicas);
                }
            });
            assertTrue(e.getMessage().contains("replica 1 (jvm:1)") && e.getMessage().contains("arena is closed"), e.getMessage());
            f.assertUnchanged();
        }
    }

    @Test
    void asyncWithoutStreamsIsDoneOnceAwaited() {
        List<Device> devices = devices(4, false);
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, 300_001, DType.BF16, 11)) {
            SyncHandle h = sync.synchronizeAsync(f.replicas);
            h.await();
            assertTrue(h.isDone());
            f.assertAveraged();
        }
        try (GradientSynchronizer single = Synchronizers.create(SyncBackend.SINGLE, devices.subList(0, 1));
                ReplicaFixture f = ReplicaFixture.flat(devices.subList(0, 1), 10, DType.FP32, 1)) {
            assertTrue(single.synchronizeAsync(f.replicas).isDone());
        }
    }

    /**
     * The caller's work on replica 1's stream fails before the call: the synchronous call and the
     * asynchronous one's await both throw a {@link SyncFailedException} naming replica 1, and
     * closing afterwards does not throw that failure a second time.
     */
    @ParameterizedTest(name = "{0}, async {2}")
    @MethodSource("failingCallerShapes")
    void aFailedCallerStreamFailsTheCallNamingItsReplica(Backend backend, boolean opencl, boolean async) {
        List<Device> devices = devices(2, false);
        GradientSynchronizer sync = backend.make().apply(2, devices);
        try {
            List<Replica> replicas = failingBackward(devices);
            SyncFailedException e = assertThrows(SyncFailedException.class,
                    () -> {
                        if (async) {
                            sync.synchronizeAsync(replicas).await();
                        } else {
                            sync.synchronize(replicas);
                        }
                    });
            assertEquals(1, e.replica(), e.getMessage());
            assertTrue(e.getMessage().contains("backward blew up"), e.getMessage());
        } finally {
            sync.close(); // the failure reached the caller once: close is quiet
        }
    }

    /** A caller stream closed after its replica was built is refused before anything moves, naming the replica, in both forms. */
    @ParameterizedTest(name = "{0}, async {2}")
    @MethodSource("failingCallerShapes")
    void aClosedCallerStreamIsRefusedInBothForms(Backend backend, boolean opencl, boolean async) {
        List<Device> devices = devices(2, false);
        try (GradientSynchronizer sync = backend.make().apply(2, devices)) {
            List<Replica> replicas = new ArrayList<>();
            for (Device d : devices) {
                replicas.add(Replica.on(d).stream(d.createStream()).add(new Gradient("g", d.allocate(4096), 0, 1024, DType.FP32)).build());
            }
            replicas.get(1).stream().close();
            RuntimeException e = assertThrows(RuntimeException.class, () -> {
                if (async) {
                    sync.synchronizeAsync(replicas).await();
                } else {
                    sync.synchronize(replicas);
                }
            });
            assertTrue(e instanceof IllegalArgumentException && e.getMessage().contains("replica 1 (jvm:1): its stream is closed"),
                    e.toString());
        }
    }

    /** A failed asynchronous call never awaited is not lost: close reports it. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("failingCallerShapes")
    void closeReportsAFailureNoAwaitSaw(Backend backend, boolean opencl, boolean async) {
        if (async) {
            return; // one case per backend
        }
        List<Device> devices = devices(2, false);
        GradientSynchronizer sync = backend.make().apply(2, devices);
        List<Replica> replicas = failingBackward(devices);
        sync.synchronizeAsync(replicas); // its handle dropped
        RuntimeException e = assertThrows(RuntimeException.class, sync::close);
        assertTrue(String.valueOf(e.getMessage()).contains("backward blew up")
                || String.valueOf(e.getCause()).contains("backward blew up"), e.toString());
    }

    /**
     * The same through a 16-bit wire: a reported failure is not thrown again by close, one whose
     * handle was dropped is.
     */
    @ParameterizedTest(name = "{0}, reported {1}")
    @MethodSource("wiredFailures")
    void aWiredCallsFailureIsReportedOnce(String backend, boolean reported) {
        List<Device> devices = devices(2, false);
        GradientSynchronizer sync = backend.equals("cpu")
                ? Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults().withWaitForCaller(false).withWire(DType.BF16))
                : new io.gradsync.sync.backend.wire.WireSynchronizer(PtxOnJvm.schedule(devices, PtxOptions.defaults(), false, false),
                        DType.BF16, devices, false);
        List<Replica> replicas = failingBackward(devices);
        SyncHandle h = sync.synchronizeAsync(replicas);
        if (reported) {
            SyncFailedException e = assertThrows(SyncFailedException.class, h::await);
            assertTrue(e.getMessage().contains("backward blew up"), e.getMessage());
            sync.close();
        } else {
            RuntimeException e = assertThrows(RuntimeException.class, sync::close);
            assertTrue(String.valueOf(e.getMessage()).contains("backward blew up")
                    || String.valueOf(e.getCause()).contains("backward blew up"), e.toString());
        }
    }

    static Stream<Arguments> wiredFailures() {
        return Stream.of("cpu", "ptx schedule").flatMap(b -> Stream.of(true, false).map(r -> Arguments.of(b, r)));
    }

    /** Two replicas on their own streams, whose backward on replica 1 fails. */
    private static List<Replica> failingBackward(List<Device> devices) {
        List<Replica> replicas = new ArrayList<>();
        for (Device d : devices) {
            DeviceStream st = d.createStream();
            replicas.add(Replica.on(d).stream(st).add(new Gradient("g", d.allocate(4096), 0, 1024, DType.FP32)).build());
        }
        ((JvmStream) replicas.get(1).stream()).submit("backward", () -> {
            throw new IllegalStateException("backward blew up");
        });
        return replicas;
    }

    static Stream<Arguments> failingCallerShapes() {
        return backends().filter(a -> !(Boolean) a.get()[1]) // JVM streams run the failing work
                .flatMap(a -> Stream.of(false, true).map(async -> Arguments.of(a.get()[0], a.get()[1], async)));
    }

    @Test
    void aFailureNamesTheReplicaWhoseDeviceItNames() {
        List<Device> d = devices(3, false);
        assertEquals(2, LocalHandles.failedReplica(d, new IllegalStateException("cuMemcpy failed on jvm:2: boom")));
        assertEquals(0, LocalHandles.failedReplica(d, new IllegalStateException("stream of jvm:0 is closed")));
        assertEquals(-1, LocalHandles.failedReplica(d, new IllegalStateException("jvm:21 is elsewhere")));
        assertEquals(-1, LocalHandles.failedReplica(d, new IllegalStateException(null, null)));
        assertEquals(1, LocalHandles.failedReplica(d, new IllegalStateException("jvm:0 waited for an event that follows failed work",
                new IllegalStateException("backward on jvm:1 failed"))), "the deepest cause that names a device");
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(part), () -> "expected '" + part + "' in: " + e.getMessage());
    }
}
