package io.gradsync.sync.nccl.rendezvous;

import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.sync.nccl.RendezvousException;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.nccl.NcclUniqueId;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The unique-id rendezvous over loopback, every rank a thread of this JVM. The id is random
 * bytes here: the rendezvous only carries it, NCCL is not involved.
 */
class RendezvousTest {
    private static final Duration SHORT = Duration.ofMillis(1500);
    private ExecutorService pool;
    /** Rank 0's socket, bound before any rank starts: no other process can take the port meanwhile. */
    private ServerSocket listening;
    /** Released once per connection rank 0 accepts. */
    private java.util.concurrent.Semaphore accepted;
    private int port;

    @BeforeEach
    void setUp() throws IOException {
        pool = Executors.newCachedThreadPool();
        accepted = new java.util.concurrent.Semaphore(0);
        listening = new ServerSocket(0) {
            @Override
            public java.net.Socket accept() throws IOException {
                java.net.Socket s = super.accept();
                accepted.release();
                return s;
            }
        };
        port = listening.getLocalPort();
    }

    /**
     * Every rank of this test is gone before the next test binds a port: a client still retrying
     * could otherwise reach the next test's rank 0 if the kernel hands out the same port again.
     */
    @AfterEach
    void tearDown() throws IOException, InterruptedException {
        pool.shutdownNow();
        listening.close();
        assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS), "rendezvous threads still running after the test");
    }

    private RendezvousConfig config(int rank, int worldSize) {
        return new RendezvousConfig(rank, worldSize, rank, "127.0.0.1", port);
    }

    private static NcclUniqueId randomId() {
        byte[] b = new byte[NcclUniqueId.SIZE];
        ThreadLocalRandom.current().nextBytes(b);
        return NcclUniqueId.of(b);
    }

    private Future<NcclUniqueId> start(RendezvousConfig c, Duration timeout, NcclUniqueId id) {
        if (c.rank() == 0) {
            return pool.submit(() -> Rendezvous.serveOn(listening, c, timeout, System.nanoTime() + timeout.toNanos(), () -> id));
        }
        return pool.submit(() -> Rendezvous.exchange(c, timeout, () -> id));
    }

    private static RendezvousException failure(Future<?> f) throws InterruptedException, java.util.concurrent.TimeoutException {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof RendezvousException, () -> "expected a RendezvousException, got " + e.getCause());
        return (RendezvousException) e.getCause();
    }

    private static void assertMentions(Throwable e, String... fragments) {
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), () -> "'" + f + "' in: " + e.getMessage());
        }
    }

    @Test
    void everyRankGetsRankZerosId() throws Exception {
        NcclUniqueId id = randomId();
        List<Future<NcclUniqueId>> ranks = new ArrayList<>();
        for (int r = 3; r >= 0; r--) { // rank 0 last: the others retry until it listens
            ranks.add(start(config(r, 4), Duration.ofSeconds(20), r == 0 ? id : randomId()));
        }
        for (Future<NcclUniqueId> f : ranks) {
            assertArrayEquals(id.toByteArray(), f.get(30, TimeUnit.SECONDS).toByteArray());
        }
    }

    @Test
    void rankZeroMakesTheIdOnlyOnce() throws Exception {
        AtomicInteger made = new AtomicInteger();
        NcclUniqueId id = randomId();
        Future<NcclUniqueId> zero = pool.submit(() -> Rendezvous.serveOn(listening, config(0, 2), Duration.ofSeconds(20),
                System.nanoTime() + Duration.ofSeconds(20).toNanos(), () -> {
                    made.incrementAndGet();
                    return id;
                }));
        Future<NcclUniqueId> one = pool.submit(() -> Rendezvous.exchange(config(1, 2), Duration.ofSeconds(20), () -> {
            throw new AssertionError("only rank 0 makes the id");
        }));
        assertEquals(id, one.get(30, TimeUnit.SECONDS));
        assertEquals(id, zero.get(30, TimeUnit.SECONDS));
        assertEquals(1, made.get());
    }

    @Test
    void aWorldOfOneNeedsNobody() {
        NcclUniqueId id = randomId();
        assertEquals(id, Rendezvous.exchange(config(0, 1), SHORT, () -> id));
    }

    @Test
    void worldSizeMismatchFailsEveryRankNamingBothSizes() throws Exception {
        Future<NcclUniqueId> zero = start(config(0, 3), Duration.ofSeconds(20), randomId());
        Future<NcclUniqueId> one = start(config(1, 3), Duration.ofSeconds(20), randomId());
        assertTrue(accepted.tryAcquire(30, TimeUnit.SECONDS), "rank 1 never reached rank 0"); // it is in, so it must hear of the failure too
        Future<NcclUniqueId> stray = start(config(2, 4), Duration.ofSeconds(20), randomId());
        for (Future<NcclUniqueId> f : List.of(zero, one, stray)) {
            assertMentions(failure(f), "world size mismatch", "WORLD_SIZE=4", "WORLD_SIZE=3");
        }
    }

    @Test
    void duplicateRankFails() throws Exception {
        Future<NcclUniqueId> zero = start(config(0, 3), Duration.ofSeconds(20), randomId());
        Future<NcclUniqueId> a = start(config(1, 3), Duration.ofSeconds(20), randomId());
        Future<NcclUniqueId> b = start(config(1, 3), Duration.ofSeconds(20), randomId());
        assertMentions(failure(zero), "rank 1 joined twice");
        assertMentions(failure(a), "rank 1 joined twice");
        assertMentions(failure(b), "rank 1 joined twice");
    }

    @Test
    void rankOutOfRangeFails() throws Exception {
        Future<NcclUniqueId> zero = start(config(0, 2), Duration.ofSeconds(20), randomId());
        // A hand-written hello: RendezvousConfig itself refuses such a rank (see RendezvousConfigTest).
        hello(Rendezvous.MAGIC, 2, 5);
        assertMentions(failure(zero), "rank 5", "out of range", "WORLD_SIZE=2");
    }

    /**
     * A stranger's message is read only in part; rank 0 must still get its answer across (closing
     * with unread input resets the connection, which lost the answer about one run in eight).
     */
    @org.junit.jupiter.api.RepeatedTest(25)
    void somethingElseOnThePortIsRejected() throws Exception {
        Future<NcclUniqueId> zero = start(config(0, 2), Duration.ofSeconds(20), randomId());
        hello(0x47455420, 0, 0); // "GET " and zeros
        assertMentions(failure(zero), "not a gradsync rendezvous");
    }

    @Test
    void rankZeroThatNeverAppearsFailsWithinTheTimeout() throws Exception {
        listening.close(); // nobody listens on the port now
        long t0 = System.nanoTime();
        RendezvousException e = failure(start(config(2, 4), SHORT, randomId()));
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertMentions(e, "rank 2", "could not reach rank 0 at 127.0.0.1:" + port, "within 1.5 s", "ConnectException");
        assertTrue(seconds >= 1.4 && seconds < 5, "failed after " + seconds + " s");
    }

    @Test
    void ranksThatNeverArriveFailRankZeroWithinTheTimeoutAndTellTheOthers() throws Exception {
        long t0 = System.nanoTime();
        Future<NcclUniqueId> zero = start(config(0, 4), SHORT, randomId());
        Future<NcclUniqueId> two = start(config(2, 4), Duration.ofSeconds(20), randomId());
        RendezvousException e = failure(zero);
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertMentions(e, "rank(s) 1, 3 of 4 did not arrive within 1.5 s");
        assertTrue(seconds >= 1.4 && seconds < 5, "failed after " + seconds + " s");
        assertMentions(failure(two), "rank 2: rank 0 refused", "rank(s) 1, 3 of 4 did not arrive");
    }

    @Test
    void portInUseIsNamed() {
        RendezvousException e = assertThrows(RendezvousException.class, // the test's own socket holds the port
                () -> Rendezvous.exchange(config(0, 2), SHORT, RendezvousTest::randomId));
        assertMentions(e, "cannot listen on port " + port, "MASTER_PORT");
    }

    @Test
    void rankZeroListensOnMasterPortByItself() throws Exception {
        listening.close();
        NcclUniqueId id = randomId();
        Future<NcclUniqueId> zero = pool.submit(() -> Rendezvous.exchange(config(0, 2), Duration.ofSeconds(20), () -> id));
        Future<NcclUniqueId> one = start(config(1, 2), Duration.ofSeconds(20), randomId());
        assertEquals(id, one.get(30, TimeUnit.SECONDS));
        assertEquals(id, zero.get(30, TimeUnit.SECONDS));
    }

    /** Connects (retrying until rank 0 listens), sends one hello and waits for the answer once. */
    private void hello(int magic, int worldSize, int rank) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Socket s = null;
        while (s == null) {
            try {
                s = new Socket("127.0.0.1", port);
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
        try (Socket socket = s) {
            socket.setSoTimeout(10_000); // a test must fail, not hang, if rank 0 never answers
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(magic);
            out.writeInt(Rendezvous.VERSION);
            out.writeInt(worldSize);
            out.writeInt(rank);
            out.flush();
            assertTrue(socket.getInputStream().read() >= 0, "rank 0 closed without an answer");
        }
    }
}
