package io.gradsync.sync.nccl;

import java.util.Map;
import java.util.Objects;

/**
 * Where this process stands in a multi-process job, as a torchrun-style launcher describes it.
 *
 * @param rank       this process's rank, in {@code [0, worldSize)}
 * @param worldSize  processes in the job (one GPU each)
 * @param localRank  this process's rank on its host: the GPU it drives
 * @param masterAddr host of rank 0, where the NCCL unique id is served
 * @param masterPort TCP port rank 0 serves the id on
 *
 * <p>Immutable: safe to share between threads.
 */
public record RendezvousConfig(int rank, int worldSize, int localRank, String masterAddr, int masterPort) {
    public static final String RANK = "RANK";
    public static final String WORLD_SIZE = "WORLD_SIZE";
    public static final String LOCAL_RANK = "LOCAL_RANK";
    public static final String MASTER_ADDR = "MASTER_ADDR";
    public static final String MASTER_PORT = "MASTER_PORT";
    /** Overrides the port derived from {@code MASTER_PORT}. */
    public static final String GRADSYNC_MASTER_PORT = "GRADSYNC_MASTER_PORT";
    /** Set by torchrun when its own store already listens on {@code MASTER_PORT}. */
    static final String TORCHRUN_AGENT_STORE = "TORCHELASTIC_USE_AGENT_STORE";

    public RendezvousConfig {
        Objects.requireNonNull(masterAddr, "masterAddr");
        if (worldSize < 1) {
            throw new IllegalArgumentException("world size must be >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in [0, " + worldSize + ") (world size " + worldSize + ")");
        }
        if (localRank < 0) {
            throw new IllegalArgumentException("local rank must be >= 0, got " + localRank);
        }
        if (masterAddr.isBlank()) {
            throw new IllegalArgumentException("master address must not be blank");
        }
        if (masterPort < 1 || masterPort > 65535) {
            throw new IllegalArgumentException("master port must be in [1, 65535], got " + masterPort);
        }
    }

    /** True where a launcher set {@code WORLD_SIZE}: this process is one rank of a multi-process job. */
    public static boolean isLaunched(Map<String, String> env) {
        String ws = env.get(WORLD_SIZE);
        return ws != null && !ws.isBlank();
    }

    /** {@link #isLaunched(Map)} of this process's environment. */
    public static boolean isLaunched() {
        return isLaunched(System.getenv());
    }

    /** This process's configuration, from {@link System#getenv()}. */
    public static RendezvousConfig fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /**
     * Reads {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code MASTER_ADDR} and
     * {@code MASTER_PORT}. The id is served on {@code GRADSYNC_MASTER_PORT} where set; under
     * torchrun, whose own store holds {@code MASTER_PORT}, on {@code MASTER_PORT + 1}.
     *
     * @throws IllegalArgumentException naming the variable that is missing or malformed
     */
    public static RendezvousConfig fromEnvironment(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        int worldSize = intVar(env, WORLD_SIZE);
        int rank = intVar(env, RANK);
        int localRank = intVar(env, LOCAL_RANK);
        String addr = required(env, MASTER_ADDR);
        int port;
        if (present(env, GRADSYNC_MASTER_PORT)) {
            port = intVar(env, GRADSYNC_MASTER_PORT);
        } else {
            port = intVar(env, MASTER_PORT);
            if ("true".equalsIgnoreCase(env.getOrDefault(TORCHRUN_AGENT_STORE, "").strip())) {
                port++; // torchrun's TCPStore already listens on MASTER_PORT
            }
        }
        if (worldSize < 1) {
            throw new IllegalArgumentException(WORLD_SIZE + "=" + worldSize + ": must be >= 1");
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException(RANK + "=" + rank + " is not in [0, " + WORLD_SIZE + "=" + worldSize + ")");
        }
        if (localRank < 0) {
            throw new IllegalArgumentException(LOCAL_RANK + "=" + localRank + ": must be >= 0");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException((present(env, GRADSYNC_MASTER_PORT) ? GRADSYNC_MASTER_PORT : MASTER_PORT)
                    + " gives port " + port + ", not in [1, 65535]");
        }
        return new RendezvousConfig(rank, worldSize, localRank, addr, port);
    }

    private static boolean present(Map<String, String> env, String name) {
        String v = env.get(name);
        return v != null && !v.isBlank();
    }

    private static String required(Map<String, String> env, String name) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("environment variable " + name + " is not set; a multi-process run needs "
                    + String.join(", ", RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
                    + " (torchrun sets them, so does scripts/gradsync-multiproc)");
        }
        return v.strip();
    }

    private static int intVar(Map<String, String> env, String name) {
        String v = required(env, name);
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("environment variable " + name + "='" + v + "' is not an integer");
        }
    }
}
