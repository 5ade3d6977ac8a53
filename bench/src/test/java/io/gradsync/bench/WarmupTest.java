package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WarmupTest {

    @Test
    void oneProcessWarmsUpForAtLeastTheMinimumTimeAndTheCallsAsked() {
        AtomicInteger calls = new AtomicInteger();
        long t0 = System.nanoTime();
        int made = Warmup.run(true, 3, 1 << 20, calls::incrementAndGet);
        assertTrue(System.nanoTime() - t0 >= Warmup.MIN_NANOS || made == Warmup.MAX_CALLS, "stopped early after " + made);
        assertEquals(calls.get(), made);
        assertTrue(made >= 3);

        // a slow call: the count asked for is still made, even past the minimum time
        AtomicInteger slow = new AtomicInteger();
        assertEquals(2, Warmup.run(true, 2, 1, () -> {
            slow.incrementAndGet();
            sleep(Warmup.MIN_NANOS / 1_000_000 + 10);
        }));
        assertEquals(2, slow.get());
    }

    @Test
    void processesOfOneCollectiveMakeACountFromTheBytesNotTheClock() {
        // every rank must make the same calls: the count depends on the size alone
        assertEquals(2048, Warmup.run(false, 3, 1 << 20, () -> { }));
        assertEquals(3, Warmup.run(false, 3, 1L << 30, () -> { }), "the count asked for when it is more");
        assertEquals(Warmup.MAX_CALLS, Warmup.run(false, 0, 1, () -> { }));
        assertThrows(IllegalArgumentException.class, () -> Warmup.run(true, -1, 1, () -> { }));
        assertThrows(IllegalArgumentException.class, () -> Warmup.run(false, 1, 0, () -> { }));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
