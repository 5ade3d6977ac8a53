package io.gradsync.sync.nccl;

import java.util.Map;
import java.util.Objects;

/**
 * Where this process stands in a multi-process job, as its launcher (torchrun, Open MPI's
 * {@code mpirun} or SLURM's {@code srun}) describes it.
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

    /** Port the rendezvous serves the id on under Open MPI and SLURM where neither port variable is set: torch's default. */
    public static final int DEFAULT_PORT = 29500;

    /**
     * True where a launcher started this process as one rank of a job: torchrun ({@code WORLD_SIZE}),
     * Open MPI ({@code OMPI_COMM_WORLD_SIZE}) or SLURM's {@code srun} ({@code SLURM_NTASKS} in a
     * step, {@code SLURM_STEP_ID} set: a batch script's own shell is no rank).
     */
    public static boolean isLaunched(Map<String, String> env) {
        return !Launchers.present(env).isEmpty();
    }

    /**
     * The world-size variable of the innermost launcher here ({@code WORLD_SIZE},
     * {@code OMPI_COMM_WORLD_SIZE} or {@code SLURM_NTASKS}), or null where no launcher started this process.
     */
    public static String worldSizeVariable(Map<String, String> env) {
        return switch (Launchers.present(env).stream().findFirst().orElse("")) {
            case "torchrun" -> WORLD_SIZE;
            case "Open MPI" -> Launchers.OMPI_SIZE;
            case "SLURM" -> Launchers.SLURM_NTASKS;
            default -> null;
        };
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
     * This process's place in its job, from the launcher that started it:
     * <ul>
     *   <li>torchrun: {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code MASTER_ADDR},
     *       {@code MASTER_PORT}; under torchrun, whose own store holds {@code MASTER_PORT}, the id is
     *       served on {@code MASTER_PORT + 1};</li>
     *   <li>Open MPI ({@code mpirun}): {@code OMPI_COMM_WORLD_RANK}, {@code _SIZE}, {@code _LOCAL_RANK};
     *       the host from {@code MASTER_ADDR}, or this host where every rank is local;</li>
     *   <li>SLURM ({@code srun}): {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID};
     *       the host from {@code MASTER_ADDR}, else the first of {@code SLURM_JOB_NODELIST}.</li>
     * </ul>
     * The innermost launcher wins (torchrun, then Open MPI, then SLURM); two that give one world
     * size but different ranks fail. The port: {@code GRADSYNC_MASTER_PORT} where set, else
     * {@code MASTER_PORT}, else (Open MPI, SLURM) {@link #DEFAULT_PORT}.
     *
     * @throws IllegalArgumentException naming the variable that is missing, malformed or contradicted
     */
    public static RendezvousConfig fromEnvironment(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        Launchers.World world = Launchers.world(env);
        boolean torchrun = world.launcher().equals("torchrun");
        String addr = Launchers.set(env, MASTER_ADDR) ? env.get(MASTER_ADDR).strip() : Launchers.defaultHost(env, world);
        if (addr == null) {
            addr = Launchers.required(env, MASTER_ADDR, torchrun
                    ? Launchers.TORCHRUN_NEEDS
                    : world.launcher() + " does not say which host rank 0 runs on: set it to that host ("
                            + (world.launcher().equals("SLURM") ? "srun --export=ALL," + MASTER_ADDR + "=..., or let SLURM set SLURM_JOB_NODELIST"
                            : "mpirun -x " + MASTER_ADDR + "=...") + ")");
        }
        int port;
        if (Launchers.set(env, GRADSYNC_MASTER_PORT)) {
            port = Launchers.intVar(env, GRADSYNC_MASTER_PORT);
        } else if (torchrun || Launchers.set(env, MASTER_PORT)) {
            port = Launchers.intVar(env, MASTER_PORT);
            if (torchrun && "true".equalsIgnoreCase(env.getOrDefault(TORCHRUN_AGENT_STORE, "").strip())) {
                port++; // torchrun's TCPStore already listens on MASTER_PORT
            }
        } else {
            port = DEFAULT_PORT;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException((Launchers.set(env, GRADSYNC_MASTER_PORT) ? GRADSYNC_MASTER_PORT : MASTER_PORT)
                    + " gives port " + port + ", not in [1, 65535]");
        }
        return new RendezvousConfig(world.rank(), world.size(), world.localRank(), addr, port);
    }
}
