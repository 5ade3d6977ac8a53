package io.gradsync.tasks.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.DeviceCatalog;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * What every runtime's devices must do, run against one runtime by a subclass: copies in every
 * direction at odd offsets, fills, events ordering streams, and misuse rejected before any
 * native call.
 */
abstract class DeviceContractTest {

    /** Two devices of the runtime under test (the same device twice where it has only one). */
    abstract List<? extends Device> devices();

    @Test
    void hostRoundTripAtOddOffsetsKeepsEveryByte() {
        Device d = devices().getFirst();
        long n = 1_000_003;
        try (DeviceBuffer buf = d.allocate(n + 64); HostBuffer in = d.allocateHost(n); HostBuffer out = d.allocateHost(n + 8);
                DeviceStream s = d.createStream()) {
            randomize(in.segment());
            out.segment().fill((byte) 0x5A);
            s.copyFromHost(in, 0, buf, 13, n);
            s.copyToHost(buf, 13, out, 5, n);
            s.synchronize();
            assertEquals(-1, in.segment().mismatch(out.segment().asSlice(5, n)));
            assertEquals(0x5A, out.segment().get(ValueLayout.JAVA_BYTE, 4));
            assertEquals(0x5A, out.segment().get(ValueLayout.JAVA_BYTE, 5 + n));
        }
    }

    @Test
    void fill32WritesTheWordPatternOnlyWhereAsked() {
        Device d = devices().getFirst();
        try (DeviceBuffer buf = d.allocate(4096); HostBuffer out = d.allocateHost(4096); DeviceStream s = d.createStream()) {
            s.fill32(buf, 0, 4096, 0x01020304);
            s.fill32(buf, 1024, 2048, 0x7FC00000);
            s.copyToHost(buf, 0, out, 0, 4096);
            s.synchronize();
            for (int i = 0; i < 1024; i++) {
                int expected = i >= 256 && i < 768 ? 0x7FC00000 : 0x01020304;
                assertEquals(expected, out.segment().getAtIndex(ValueLayout.JAVA_INT, i), "word " + i);
            }
        }
    }

    @Test
    void copiesBetweenDevicesAndOrdersStreamsWithEvents() {
        Device a = devices().get(0);
        Device b = devices().get(1);
        long n = 3 << 20;
        try (DeviceBuffer src = a.allocate(n); DeviceBuffer dst = b.allocate(n); HostBuffer in = a.allocateHost(n);
                HostBuffer out = b.allocateHost(n); DeviceStream sa = a.createStream(); DeviceStream sb = b.createStream()) {
            randomize(in.segment());
            sa.copyFromHost(in, 0, src, 0, n);
            DeviceEvent uploaded = sa.record();
            sb.waitFor(uploaded);
            sb.copy(src, 0, dst, 0, n);
            sb.copyToHost(dst, 0, out, 0, n);
            DeviceEvent done = sb.record();
            done.synchronize();
            assertTrue(done.isDone());
            assertEquals(-1, in.segment().mismatch(out.segment()));
            uploaded.close();
            done.close();
        }
    }

    /** Untimed events order streams as timed ones do: the second stream's copy sees the first's fill, round after round. */
    @Test
    void untimedEventsOrderStreams() {
        Device d = devices().getFirst();
        long n = 4 << 20;
        try (DeviceBuffer buf = d.allocate(n); DeviceBuffer copy = d.allocate(n); HostBuffer out = d.allocateHost(n);
                DeviceStream first = d.createStream(); DeviceStream second = d.createStream(); DeviceEvent filled = d.createUntimedEvent()) {
            for (int round = 1; round <= 3; round++) {
                first.fill32(buf, 0, n, round);
                first.record(filled);
                second.waitFor(filled);
                second.copy(buf, 0, copy, 0, n);
                second.copyToHost(copy, 0, out, 0, n);
                second.synchronize();
                assertTrue(filled.isDone());
                for (long i = 0; i < n / 4; i += 4099) {
                    assertEquals(round, out.segment().getAtIndex(ValueLayout.JAVA_INT, i), "round " + round + ", word " + i);
                }
            }
        }
    }

    @Test
    void eventsAreReusableAndTimeTheWorkBetweenThem() {
        Device d = devices().getFirst();
        try (DeviceBuffer buf = d.allocate(8 << 20); DeviceStream s = d.createStream();
                DeviceEvent start = d.createEvent(); DeviceEvent middle = d.createEvent(); DeviceEvent end = d.createEvent()) {
            for (int i = 0; i < 3; i++) {
                s.record(start);
                s.fill32(buf, 0, 8 << 20, i);
                s.record(middle);
                s.fill32(buf, 0, 8 << 20, i + 1);
                s.record(end);
                end.synchronize();
                double first = middle.elapsedMillisSince(start);
                double second = end.elapsedMillisSince(middle);
                double whole = end.elapsedMillisSince(start);
                // the clocks only move forward: each stretch holds work, and the stretches add up
                assertTrue(first > 0 && second > 0, "round " + i + ": " + first + " ms, then " + second + " ms");
                assertEquals(first + second, whole, 1e-3 + 1e-6 * whole, "round " + i + ": the stretches do not add up");
                assertEquals(-whole, start.elapsedMillisSince(end), 1e-3 + 1e-6 * whole, "round " + i + ": not antisymmetric");
            }
        }
    }

    /**
     * A stream closed while other threads queue work on it: each call either lands or throws
     * {@link IllegalStateException} naming the closed stream, and nothing reaches a destroyed
     * native stream (which could crash the JVM).
     */
    @Test
    void closingAStreamWhileOthersQueueWorkIsSafe() throws Exception {
        Device d = devices().getFirst();
        try (DeviceBuffer buf = d.allocate(1 << 16)) {
            for (int round = 0; round < 20; round++) {
                DeviceStream s = d.createStream();
                java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
                java.util.List<Thread> threads = new java.util.ArrayList<>();
                java.util.Queue<Throwable> wrong = new java.util.concurrent.ConcurrentLinkedQueue<>();
                for (int t = 0; t < 4; t++) {
                    int word = t;
                    threads.add(Thread.ofPlatform().start(() -> {
                        try {
                            start.await();
                            for (int i = 0; i < 10_000; i++) {
                                s.fill32(buf, 0, 1 << 16, word);
                                if (i % 64 == 0) {
                                    try (DeviceEvent e = s.record()) {
                                        e.synchronize();
                                    }
                                }
                            }
                        } catch (IllegalStateException e) {
                            if (!String.valueOf(e.getMessage()).contains("closed")) {
                                wrong.add(e);
                            }
                        } catch (Throwable e) {
                            wrong.add(e);
                        }
                    }));
                }
                start.countDown();
                Thread.sleep(round % 3);
                s.close();
                for (Thread t : threads) {
                    t.join();
                }
                assertTrue(wrong.isEmpty(), () -> "round: " + wrong);
                assertTrue(s.isClosed());
            }
        }
    }

    @Test
    void rangesOutsideABufferAreRejectedBeforeAnyCopy() {
        Device d = devices().getFirst();
        try (DeviceBuffer buf = d.allocate(1024); HostBuffer host = d.allocateHost(1024); DeviceStream s = d.createStream()) {
            assertThrows(IndexOutOfBoundsException.class, () -> s.copyToHost(buf, 1000, host, 0, 100));
            assertThrows(IndexOutOfBoundsException.class, () -> s.copyFromHost(host, 0, buf, -1, 10));
            assertThrows(IndexOutOfBoundsException.class, () -> s.copyFromHost(host, 1020, buf, 0, 8));
            assertThrows(IndexOutOfBoundsException.class, () -> s.copy(buf, 0, buf, 512, 1024));
            assertThrows(IllegalArgumentException.class, () -> s.fill32(buf, 2, 8, 0));
            assertThrows(IllegalArgumentException.class, () -> d.allocate(0));
            assertThrows(IllegalArgumentException.class, () -> d.allocateHost(-5));
        }
    }

    @Test
    void closedBuffersAreRejected() {
        Device d = devices().getFirst();
        DeviceBuffer buf = d.allocate(1024);
        buf.close();
        buf.close(); // idempotent
        assertTrue(buf.isClosed());
        try (HostBuffer host = d.allocateHost(1024); DeviceStream s = d.createStream()) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> s.copyToHost(buf, 0, host, 0, 16));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
        HostBuffer host = d.allocateHost(64);
        host.close();
        assertThrows(IllegalStateException.class, host::segment);
    }

    @Test
    void describesItself() {
        Device d = devices().getFirst();
        assertTrue(d.id().startsWith(d.runtime().label() + ":"), d.id());
        assertTrue(!d.name().isBlank());
        assertTrue(d.memoryBytes() > 0);
        assertTrue(!d.capability().isBlank());
    }

    static void randomize(MemorySegment segment) {
        SplittableRandom random = new SplittableRandom(ThreadLocalRandom.current().nextLong());
        for (long i = 0; i + 8 <= segment.byteSize(); i += 8) {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
        for (long i = segment.byteSize() & ~7L; i < segment.byteSize(); i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
    }

    static List<? extends Device> twoOf(DeviceRuntime runtime) {
        RuntimeStatus status = DeviceCatalog.status(runtime);
        assumeTrue(status.available(), () -> runtime.label() + " unavailable, skipped: " + status.detail());
        List<? extends Device> all = DeviceCatalog.listed(runtime);
        return all.size() >= 2 ? all.subList(0, 2) : List.of(all.getFirst(), all.getFirst());
    }
}
