package io.gradsync.sync.nccl;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Where this process stands in its job, as the launcher that started it says: torchrun (or
 * {@code gradsync run}), Open MPI's {@code mpirun}, or SLURM's {@code srun}. The innermost
 * launcher wins: torchrun started under {@code srun}, or {@code mpirun} in a batch script, sets
 * its own variables beside the allocation's, which describe the parent.
 */
final class Launchers {
    static final String OMPI_RANK = "OMPI_COMM_WORLD_RANK";
    static final String OMPI_SIZE = "OMPI_COMM_WORLD_SIZE";
    static final String OMPI_LOCAL_RANK = "OMPI_COMM_WORLD_LOCAL_RANK";
    static final String OMPI_LOCAL_SIZE = "OMPI_COMM_WORLD_LOCAL_SIZE";
    static final String SLURM_PROCID = "SLURM_PROCID";
    static final String SLURM_NTASKS = "SLURM_NTASKS";
    static final String SLURM_LOCALID = "SLURM_LOCALID";
    /** Set for the tasks {@code srun} starts, not in a batch script's own shell (which has SLURM_PROCID=0 too). */
    static final String SLURM_STEP_ID = "SLURM_STEP_ID";
    static final String SLURM_JOB_NODELIST = "SLURM_JOB_NODELIST";

    /** What torchrun gives a rank, for the messages about a missing variable. */
    static final String TORCHRUN_NEEDS = "a multi-process run needs " + String.join(", ", RendezvousConfig.RANK,
            RendezvousConfig.WORLD_SIZE, RendezvousConfig.LOCAL_RANK, RendezvousConfig.MASTER_ADDR, RendezvousConfig.MASTER_PORT)
            + " (torchrun sets them, so does scripts/gradsync-multiproc)";

    private Launchers() {
    }

    /** One launcher's description of this process, and the variables it came from (for messages). */
    record World(String launcher, int rank, int size, int localRank, String rankVar, String sizeVar, String localVar) {
    }

    /** The launchers whose world-size variable is set here, innermost first. */
    static List<String> present(Map<String, String> env) {
        List<String> found = new ArrayList<>();
        if (set(env, RendezvousConfig.WORLD_SIZE)) {
            found.add("torchrun");
        }
        if (set(env, OMPI_SIZE)) {
            found.add("Open MPI");
        }
        if (set(env, SLURM_NTASKS) && set(env, SLURM_STEP_ID)) {
            found.add("SLURM");
        }
        return found;
    }

    /**
     * The innermost launcher's world, checked against the others: two launchers that give the same
     * world size but different ranks contradict each other (one world, two places in it), which
     * fails naming both variables.
     *
     * @throws IllegalArgumentException naming the variable that is missing, malformed or contradicted
     */
    static World world(Map<String, String> env) {
        List<World> worlds = new ArrayList<>();
        for (String launcher : present(env)) {
            worlds.add(read(env, launcher));
        }
        if (worlds.isEmpty() && set(env, RendezvousConfig.RANK)) {
            worlds.add(read(env, "torchrun")); // a torchrun set without its world size: fails naming it
        } else if (worlds.isEmpty() && set(env, OMPI_RANK)) {
            worlds.add(read(env, "Open MPI"));
        }
        if (worlds.isEmpty()) {
            throw new IllegalArgumentException("no launcher's variables are set: a multi-process run needs torchrun's "
                    + String.join(", ", RendezvousConfig.RANK, RendezvousConfig.WORLD_SIZE, RendezvousConfig.LOCAL_RANK,
                            RendezvousConfig.MASTER_ADDR, RendezvousConfig.MASTER_PORT)
                    + " (torchrun and scripts/gradsync-multiproc set them), Open MPI's " + OMPI_RANK + " and " + OMPI_SIZE
                    + " (mpirun), or SLURM's " + SLURM_PROCID + " and " + SLURM_NTASKS + " in an srun step");
        }
        World inner = worlds.getFirst();
        for (World other : worlds.subList(1, worlds.size())) {
            if (other.size() == inner.size() && (other.rank() != inner.rank() || other.localRank() != inner.localRank())) {
                throw new IllegalArgumentException("conflicting launcher variables: " + inner.launcher() + " gives "
                        + describe(inner) + ", " + other.launcher() + " " + describe(other) + " in a world of the same size; "
                        + "unset the variables of the launcher that did not start this process");
            }
        }
        return inner;
    }

    private static String describe(World w) {
        return w.rankVar() + "=" + w.rank() + " " + w.localVar() + "=" + w.localRank() + " of " + w.sizeVar() + "=" + w.size();
    }

    private static World read(Map<String, String> env, String launcher) {
        return switch (launcher) {
            case "torchrun" -> world(env, launcher, RendezvousConfig.RANK, RendezvousConfig.WORLD_SIZE, RendezvousConfig.LOCAL_RANK);
            case "Open MPI" -> world(env, launcher, OMPI_RANK, OMPI_SIZE, OMPI_LOCAL_RANK);
            default -> world(env, launcher, SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID);
        };
    }

    private static World world(Map<String, String> env, String launcher, String rankVar, String sizeVar, String localVar) {
        int size = intVar(env, sizeVar);
        int rank = intVar(env, rankVar);
        int local = intVar(env, localVar);
        if (size < 1) {
            throw new IllegalArgumentException(sizeVar + "=" + size + ": must be >= 1");
        }
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException(rankVar + "=" + rank + " is not in [0, " + sizeVar + "=" + size + ")");
        }
        if (local < 0) {
            throw new IllegalArgumentException(localVar + "=" + local + ": must be >= 0");
        }
        return new World(launcher, rank, size, local, rankVar, sizeVar, localVar);
    }

    /**
     * The host rank 0 runs on where the launcher tells it: SLURM's first node; Open MPI's only
     * host when every rank is local; else null (torchrun and multi-host Open MPI name it in
     * {@code MASTER_ADDR}).
     */
    static String defaultHost(Map<String, String> env, World w) {
        if (w.launcher().equals("SLURM") && set(env, SLURM_JOB_NODELIST)) {
            return firstHost(env.get(SLURM_JOB_NODELIST).strip());
        }
        if (w.launcher().equals("Open MPI") && set(env, OMPI_LOCAL_SIZE) && env.get(OMPI_LOCAL_SIZE).strip().equals(String.valueOf(w.size()))) {
            return "127.0.0.1";
        }
        return null;
    }

    /**
     * The first host of a SLURM node list: {@code node[07-09,12],gpu3} gives {@code node07}. Each
     * bracket group stands for its first entry, its zero padding kept.
     *
     * @throws IllegalArgumentException where the list is empty or its brackets do not close
     */
    static String firstHost(String nodelist) {
        StringBuilder host = new StringBuilder();
        int i = 0;
        while (i < nodelist.length() && nodelist.charAt(i) != ',') {
            char c = nodelist.charAt(i);
            if (c == '[') {
                int close = nodelist.indexOf(']', i);
                if (close < 0) {
                    throw new IllegalArgumentException(SLURM_JOB_NODELIST + "='" + nodelist + "': a '[' without its ']'");
                }
                String first = nodelist.substring(i + 1, close).split(",", 2)[0].split("-", 2)[0];
                host.append(first);
                i = close + 1;
            } else {
                host.append(c);
                i++;
            }
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException(SLURM_JOB_NODELIST + "='" + nodelist + "' names no host");
        }
        return host.toString();
    }

    static boolean set(Map<String, String> env, String name) {
        String v = env.get(name);
        return v != null && !v.isBlank();
    }

    static String required(Map<String, String> env, String name, String why) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("environment variable " + name + " is not set; " + why);
        }
        return v.strip();
    }

    static int intVar(Map<String, String> env, String name) {
        String v = required(env, name, TORCHRUN_NEEDS + ", or Open MPI's or SLURM's own");
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("environment variable " + name + "='" + v + "' is not an integer");
        }
    }
}
