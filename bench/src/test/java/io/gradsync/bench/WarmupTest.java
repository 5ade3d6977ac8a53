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

        // a slow call: the count asked for is still made, even past the minimum time, and the
        // steady phase adds a batch or two, not seconds of them
        AtomicInteger slow = new AtomicInteger();
        int slowMade = Warmup.run(true, 2, 1, () -> {
            slow.incrementAndGet();
            sleep(Warmup.MIN_NANOS / 1_000_000 + 10);
        });
        assertEquals(slow.get(), slowMade);
        assertTrue(slowMade >= 2 && slowMade <= 2 + 2 * Warmup.STEADY_BATCH, "slow calls made: " + slowMade);
    }

    /**
     * Calls that turn fast only after a while (the JIT compiling a host average's lanes late) are
     * warmed up until they have: the warm-up outlasts the minimum time then.
     */
    @Test
    void oneProcessWarmsUpUntilTheCallsStopGettingFaster() {
        long t0 = System.nanoTime();
        long fastFrom = t0 + Warmup.MIN_NANOS + 200_000_000L; // slow for 0.5 s, then 20x faster
        AtomicInteger calls = new AtomicInteger();
        int made = Warmup.run(true, 3, 1 << 20, () -> {
            calls.incrementAndGet();
            sleep(System.nanoTime() < fastFrom ? 20 : 1);
        });
        assertTrue(System.nanoTime() > fastFrom, "the warm-up ended while the calls were still slow, after " + made);
        assertEquals(calls.get(), made);
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
