package io.gradsync.tasks.jvm;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A JVM stream's first failure is kept until the next wait reports it, and travels along events. */
class JvmStreamFailureTest {
    private final List<JvmDevice> devices = JvmRuntime.createDevices(2);

    @AfterEach
    void close() {
        devices.forEach(JvmDevice::close);
    }

    @Test
    void aFailedCopyIsNotHiddenByALaterGoodOne() {
        JvmDevice d = devices.getFirst();
        Arena arena = Arena.ofShared();
        JvmBuffer wrapped = d.wrap(arena.allocate(64, 64));
        try (DeviceStream s = d.createStream(); HostBuffer host = d.allocateHost(64); HostBuffer other = d.allocateHost(64)) {
            CountDownLatch go = new CountDownLatch(1);
            ((JvmStream) s).submit("a gate", () -> await(go));
            s.copyToHost(wrapped, 0, host, 0, 64);     // fails: its arena is closed before it runs
            s.copyFromHost(other, 0, d.allocate(64), 0, 64);
            arena.close();
            go.countDown();
            IllegalStateException e = assertThrows(IllegalStateException.class, s::synchronize);
            assertTrue(e.getMessage().contains("copyToHost of 64 bytes on jvm:0 failed"), e.getMessage());
            assertDoesNotThrow(s::synchronize, "reported once, then cleared");
            host.segment().set(ValueLayout.JAVA_INT, 0, 5);
            JvmBuffer fresh = d.allocate(64);
            s.copyFromHost(host, 0, fresh, 0, 64);
            s.synchronize();
            assertEquals(5, fresh.segment().get(ValueLayout.JAVA_INT, 0), "the stream runs work again after the report");
        }
    }

    @Test
    void workAfterAFailureIsSkippedUntilItIsReported() {
        try (DeviceStream s = devices.getFirst().createStream()) {
            JvmStream js = (JvmStream) s;
            int[] ran = new int[1];
            js.submit("first", () -> {
                throw new ArithmeticException("boom");
            });
            js.submit("second", () -> ran[0]++);
            IllegalStateException e = assertThrows(IllegalStateException.class, s::synchronize);
            assertTrue(e.getMessage().startsWith("first on jvm:0 failed"), e.getMessage());
            assertEquals(0, ran[0]);
        }
    }

    @Test
    void anEventAfterAFailureFailsItsWaitersOnOtherStreams() {
        try (DeviceStream a = devices.get(0).createStream(); DeviceStream b = devices.get(1).createStream();
                DeviceEvent e = devices.get(0).createEvent()) {
            ((JvmStream) a).submit("backward", () -> {
                throw new IllegalArgumentException("bad grid");
            });
            a.record(e);
            b.waitFor(e);
            int[] ran = new int[1];
            ((JvmStream) b).submit("optimizer", () -> ran[0]++);
            IllegalStateException onB = assertThrows(IllegalStateException.class, b::synchronize);
            assertTrue(onB.getMessage().contains("jvm:1 waited for an event") && onB.getMessage().contains("backward on jvm:0 failed"),
                    onB.getMessage());
            assertEquals(0, ran[0], "work behind the failed event ran");
            IllegalStateException onEvent = assertThrows(IllegalStateException.class, e::synchronize);
            assertTrue(onEvent.getMessage().contains("bad grid"), onEvent.getMessage());
            IllegalStateException onA = assertThrows(IllegalStateException.class, a::synchronize);
            assertTrue(onA.getMessage().contains("backward on jvm:0 failed"), onA.getMessage());
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
