package io.gradsync.sync.nccl.rendezvous;

import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.sync.nccl.RendezvousException;
import io.gradsync.nccl.NcclUniqueId;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Hands rank 0's NCCL unique id to every other rank over TCP, before {@code ncclCommInitRank}.
 *
 * <p>Rank 0 listens on the master port. Every other rank connects (retrying until the timeout,
 * since rank 0 may start later) and sends a hello: magic, protocol version, the world size it was
 * launched with and the rank it claims. Rank 0 checks each hello (same world size, rank in range,
 * no rank twice) and answers nobody until every rank has checked in: only then do all get the id,
 * so no rank enters NCCL's init, which cannot time out, while another rank is missing. On a bad
 * hello or at the timeout, every waiting rank gets an error message instead, and rank 0 throws
 * the same message.
 *
 * <p>Wire format, big-endian ints: hello = {@code MAGIC, VERSION, worldSize, rank}; answer =
 * {@code MAGIC, status (0 id, 1 error), length, bytes} where bytes are the 128-byte id or a UTF-8 message.
 */
public final class Rendezvous {
    static final int MAGIC = 0x6773796E; // "gsyn"
    static final int VERSION = 1;
    static final int OK = 0;
    static final int ERROR = 1;
    /** Longest error message accepted from rank 0; longer answers are not ours. */
    static final int MAX_MESSAGE = 64 * 1024;
    private static final long RETRY_MILLIS = 50;
    /** How long rank 0 waits for a rank to read its answer and hang up. */
    private static final int DRAIN_MILLIS = 1000;

    private Rendezvous() {
    }

    /**
     * Rank 0 makes the id with {@code idMaker} and serves it; other ranks fetch it.
     *
     * @throws RendezvousException when ranks disagree, a rank does not arrive or rank 0 cannot be
     *                             reached within {@code timeout}; the message names ranks, address and time
     */
    public static NcclUniqueId exchange(RendezvousConfig config, Duration timeout, Supplier<NcclUniqueId> idMaker) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(idMaker, "idMaker");
        long deadline = System.nanoTime() + timeout.toNanos();
        if (config.rank() != 0) {
            return fetch(config, timeout, deadline);
        }
        if (config.worldSize() == 1) {
            return idMaker.get(); // nobody to tell, so no port to take
        }
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            try {
                server.bind(new InetSocketAddress(config.masterPort()));
            } catch (IOException e) {
                throw new RendezvousException("rank 0: cannot listen on port " + config.masterPort() + " (" + e.getMessage()
                        + "); pick a free port with " + RendezvousConfig.MASTER_PORT + " or "
                        + RendezvousConfig.GRADSYNC_MASTER_PORT, e);
            }
            return serveOn(server, config, timeout, deadline, idMaker);
        } catch (IOException e) {
            throw new RendezvousException("rank 0: rendezvous on port " + config.masterPort() + " failed: " + e.getMessage(), e);
        }
    }

    /** Rank 0 on a socket already listening (tests bind port 0 first, so no other process can take it). */
    static NcclUniqueId serveOn(ServerSocket server, RendezvousConfig config, Duration timeout, long deadline,
            Supplier<NcclUniqueId> idMaker) {
        NcclUniqueId id = idMaker.get();
        try {
            serve(server, config, id, timeout, deadline);
        } catch (IOException e) {
            throw new RendezvousException("rank 0: rendezvous on port " + config.masterPort() + " failed: " + e.getMessage(), e);
        }
        return id;
    }

    /** Waits for ranks 1..worldSize-1, then answers all of them at once with the id or with one error. */
    static void serve(ServerSocket server, RendezvousConfig config, NcclUniqueId id, Duration timeout, long deadline)
            throws IOException {
        int worldSize = config.worldSize();
        TreeMap<Integer, Socket> joined = new TreeMap<>();
        List<Socket> all = new ArrayList<>();
        try {
            String error = null;
            while (joined.size() < worldSize - 1 && error == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    error = "rank 0: rank(s) " + missing(joined.keySet(), worldSize) + " of " + worldSize
                            + " did not arrive within " + seconds(timeout) + " (port " + config.masterPort() + ")";
                    break;
                }
                server.setSoTimeout(millis(left));
                Socket s;
                try {
                    s = server.accept();
                } catch (SocketTimeoutException e) {
                    continue; // the loop's deadline check words the error
                }
                all.add(s);
                error = admit(s, config, joined, deadline);
            }
            byte[] answer = error == null ? answer(OK, id.toByteArray()) : answer(ERROR, error.getBytes(StandardCharsets.UTF_8));
            IOException sendFailure = null;
            for (Socket s : all) {
                try {
                    s.getOutputStream().write(answer);
                    s.getOutputStream().flush();
                } catch (IOException e) {
                    sendFailure = e; // a rank that vanished; its peers hear of it from NCCL
                }
            }
            if (error != null) {
                throw new RendezvousException(error);
            }
            if (sendFailure != null) {
                throw new RendezvousException("rank 0: could not send the NCCL id to every rank: " + sendFailure.getMessage(),
                        sendFailure);
            }
        } finally {
            for (Socket s : all) {
                closeAfterAnswer(s);
            }
        }
    }

    /**
     * Closes a rank's connection so that its answer arrives. Closing a socket with unread input
     * (the rest of a stranger's message) sends a reset, which can make the peer drop the answer
     * before reading it; so the output is finished first and the input drained until the peer
     * closes, for at most a moment.
     */
    private static void closeAfterAnswer(Socket s) {
        try {
            s.shutdownOutput();
            s.setSoTimeout(DRAIN_MILLIS);
            byte[] sink = new byte[512];
            long until = System.nanoTime() + DRAIN_MILLIS * 1_000_000L;
            while (System.nanoTime() < until && s.getInputStream().read(sink) >= 0) {
                // discard: only the answer matters now
            }
        } catch (IOException ignored) {
            // the peer is gone or slow: closing below is all that is left to do
        } finally {
            closeQuietly(s);
        }
    }

    /** Reads one hello; records the rank, or returns why the job cannot go on. */
    private static String admit(Socket s, RendezvousConfig config, TreeMap<Integer, Socket> joined, long deadline) {
        String peer = String.valueOf(s.getRemoteSocketAddress());
        try {
            s.setSoTimeout(millis(Math.max(1, deadline - System.nanoTime())));
            DataInputStream in = new DataInputStream(s.getInputStream());
            int magic = in.readInt();
            if (magic != MAGIC) {
                return "rank 0: a connection from " + peer + " on port " + config.masterPort()
                        + " is not a gradsync rendezvous (magic 0x" + Integer.toHexString(magic) + ")";
            }
            int version = in.readInt();
            int worldSize = in.readInt();
            int rank = in.readInt();
            if (version != VERSION) {
                return "rank 0: rank " + rank + " at " + peer + " speaks rendezvous protocol " + version + ", rank 0 speaks " + VERSION;
            }
            if (worldSize != config.worldSize()) {
                return "world size mismatch: rank " + rank + " at " + peer + " was launched with WORLD_SIZE=" + worldSize
                        + ", rank 0 with WORLD_SIZE=" + config.worldSize();
            }
            if (rank <= 0 || rank >= config.worldSize()) {
                return "rank " + rank + " from " + peer + " is out of range: ranks 1.." + (config.worldSize() - 1)
                        + " join rank 0 (WORLD_SIZE=" + config.worldSize() + ")";
            }
            Socket earlier = joined.putIfAbsent(rank, s);
            if (earlier != null) {
                return "rank " + rank + " joined twice: from " + earlier.getRemoteSocketAddress() + " and from " + peer
                        + "; check RANK of every process";
            }
            return null;
        } catch (SocketTimeoutException e) {
            return "rank 0: " + peer + " connected but sent no hello before the timeout";
        } catch (IOException e) {
            return "rank 0: reading the hello from " + peer + " failed: " + e.getMessage();
        }
    }

    private static NcclUniqueId fetch(RendezvousConfig config, Duration timeout, long deadline) {
        String where = config.masterAddr() + ":" + config.masterPort();
        String lastError = "nothing tried";
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new RendezvousException("rank " + config.rank() + ": could not reach rank 0 at " + where + " within "
                        + seconds(timeout) + " (last error: " + lastError + ")");
            }
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(config.masterAddr(), config.masterPort()), millis(Math.min(left, 1_000_000_000L)));
            } catch (IOException e) {
                // A connect cut short by the deadline says less than the error before it.
                if (!(e instanceof SocketTimeoutException) || lastError.equals("nothing tried")) {
                    lastError = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
                }
                closeQuietly(s);
                sleepBefore(deadline);
                continue;
            }
            try (s) {
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeInt(MAGIC);
                out.writeInt(VERSION);
                out.writeInt(config.worldSize());
                out.writeInt(config.rank());
                out.flush();
                s.setSoTimeout(millis(Math.max(1, deadline - System.nanoTime())));
                return readAnswer(new DataInputStream(s.getInputStream()), config, where);
            } catch (SocketTimeoutException e) {
                throw new RendezvousException("rank " + config.rank() + ": rank 0 at " + where + " did not answer within "
                        + seconds(timeout) + " (it waits for every rank to arrive)");
            } catch (EOFException e) {
                throw new RendezvousException("rank " + config.rank() + ": rank 0 at " + where
                        + " closed the connection without an answer (is something else listening on that port?)");
            } catch (IOException e) {
                throw new RendezvousException("rank " + config.rank() + ": rendezvous with rank 0 at " + where + " failed: "
                        + e.getMessage(), e);
            }
        }
    }

    private static NcclUniqueId readAnswer(DataInputStream in, RendezvousConfig config, String where) throws IOException {
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new RendezvousException("rank " + config.rank() + ": " + where
                    + " is not a gradsync rank 0 (answer magic 0x" + Integer.toHexString(magic) + ")");
        }
        int status = in.readInt();
        int length = in.readInt();
        if (status == OK && length == NcclUniqueId.SIZE) {
            byte[] id = new byte[length];
            in.readFully(id);
            return NcclUniqueId.of(id);
        }
        if (status == ERROR && length >= 0 && length <= MAX_MESSAGE) {
            byte[] text = new byte[length];
            in.readFully(text);
            throw new RendezvousException("rank " + config.rank() + ": rank 0 refused the rendezvous: "
                    + new String(text, StandardCharsets.UTF_8));
        }
        throw new RendezvousException("rank " + config.rank() + ": malformed answer from " + where + " (status " + status
                + ", length " + length + ")");
    }

    private static byte[] answer(int status, byte[] payload) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(12 + payload.length);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeInt(status);
            out.writeInt(payload.length);
            out.write(payload);
        } catch (IOException e) {
            throw new AssertionError("in-memory stream", e);
        }
        return bytes.toByteArray();
    }

    private static String missing(java.util.Set<Integer> joined, int worldSize) {
        TreeSet<Integer> absent = new TreeSet<>();
        for (int r = 1; r < worldSize; r++) {
            if (!joined.contains(r)) {
                absent.add(r);
            }
        }
        return absent.toString().replace("[", "").replace("]", "");
    }

    static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toNanos() / 1e9);
    }

    private static int millis(long nanos) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (nanos + 999_999) / 1_000_000));
    }

    private static void sleepBefore(long deadline) {
        long left = deadline - System.nanoTime();
        try {
            Thread.sleep(Math.max(0, Math.min(RETRY_MILLIS, left / 1_000_000)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RendezvousException("interrupted while waiting for rank 0");
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing was sent on it
        }
    }
}
