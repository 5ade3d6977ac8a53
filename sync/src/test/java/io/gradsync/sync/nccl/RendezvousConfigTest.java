package io.gradsync.sync.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The launchers' variables (torchrun, Open MPI, SLURM): parsed exactly, and every error names the variable at fault. */
class RendezvousConfigTest {

    private static Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("RANK", "2");
        env.put("WORLD_SIZE", "4");
        env.put("LOCAL_RANK", "1");
        env.put("MASTER_ADDR", "node7");
        env.put("MASTER_PORT", "29500");
        return env;
    }

    @Test
    void readsTheLauncherVariables() {
        assertEquals(new RendezvousConfig(2, 4, 1, "node7", 29500), RendezvousConfig.fromEnvironment(env()));
        assertTrue(RendezvousConfig.isLaunched(env()));
        assertFalse(RendezvousConfig.isLaunched(Map.of("RANK", "0")));
    }

    @Test
    void underTorchrunTheIdMovesOffTheStorePort() {
        Map<String, String> env = env();
        env.put("TORCHELASTIC_USE_AGENT_STORE", "True");
        assertEquals(29501, RendezvousConfig.fromEnvironment(env).masterPort());
        env.put("GRADSYNC_MASTER_PORT", "40000");
        assertEquals(40000, RendezvousConfig.fromEnvironment(env).masterPort());
    }

    @ParameterizedTest
    @ValueSource(strings = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"})
    void aMissingVariableIsNamed(String name) {
        Map<String, String> env = env();
        env.remove(name);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RendezvousConfig.fromEnvironment(env));
        assertTrue(e.getMessage().contains("environment variable " + name + " is not set"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT"})
    void aNonIntegerIsNamed(String name) {
        Map<String, String> env = env();
        env.put(name, "two");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RendezvousConfig.fromEnvironment(env));
        assertTrue(e.getMessage().contains(name + "='two' is not an integer"), e.getMessage());
    }

    @Test
    void rangesAreCheckedNamingTheVariables() {
        Map<String, String> env = env();
        env.put("RANK", "4");
        assertMessage(env, "RANK=4 is not in [0, WORLD_SIZE=4)");
        env.put("RANK", "-1");
        assertMessage(env, "RANK=-1");
        env = env();
        env.put("WORLD_SIZE", "0");
        assertMessage(env, "WORLD_SIZE=0");
        env = env();
        env.put("LOCAL_RANK", "-2");
        assertMessage(env, "LOCAL_RANK=-2");
        env = env();
        env.put("MASTER_PORT", "70000");
        assertMessage(env, "MASTER_PORT gives port 70000");
    }

    @Test
    void explicitValuesAreCheckedToo() {
        assertThrows(IllegalArgumentException.class, () -> new RendezvousConfig(3, 3, 0, "localhost", 29500));
        assertThrows(IllegalArgumentException.class, () -> new RendezvousConfig(0, 2, 0, " ", 29500));
        assertThrows(IllegalArgumentException.class, () -> new RendezvousConfig(0, 2, 0, "localhost", 0));
    }

    private static Map<String, String> openMpi() {
        Map<String, String> env = new HashMap<>();
        env.put("OMPI_COMM_WORLD_RANK", "3");
        env.put("OMPI_COMM_WORLD_SIZE", "4");
        env.put("OMPI_COMM_WORLD_LOCAL_RANK", "1");
        env.put("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
        return env;
    }

    private static Map<String, String> srun() {
        Map<String, String> env = new HashMap<>();
        env.put("SLURM_PROCID", "5");
        env.put("SLURM_NTASKS", "8");
        env.put("SLURM_LOCALID", "1");
        env.put("SLURM_STEP_ID", "0");
        env.put("SLURM_JOB_NODELIST", "gpu[07-09,12],cpu1");
        return env;
    }

    @Test
    void openMpiGivesTheWorldAndMasterAddrTheHost() {
        Map<String, String> env = openMpi();
        assertTrue(RendezvousConfig.isLaunched(env));
        assertMessage(env, "environment variable MASTER_ADDR is not set; Open MPI does not say which host rank 0 runs on");
        env.put("MASTER_ADDR", "head");
        assertEquals(new RendezvousConfig(3, 4, 1, "head", RendezvousConfig.DEFAULT_PORT), RendezvousConfig.fromEnvironment(env));
        env.remove("MASTER_ADDR");
        env.put("OMPI_COMM_WORLD_LOCAL_SIZE", "4"); // every rank on this host
        env.put("MASTER_PORT", "31000");
        assertEquals(new RendezvousConfig(3, 4, 1, "127.0.0.1", 31000), RendezvousConfig.fromEnvironment(env));
        env.remove("OMPI_COMM_WORLD_LOCAL_RANK");
        assertMessage(env, "environment variable OMPI_COMM_WORLD_LOCAL_RANK is not set");
    }

    @Test
    void srunGivesTheWorldAndItsFirstNodeTheHost() {
        Map<String, String> env = srun();
        assertTrue(RendezvousConfig.isLaunched(env));
        assertEquals(new RendezvousConfig(5, 8, 1, "gpu07", 29500), RendezvousConfig.fromEnvironment(env));
        env.put("MASTER_ADDR", "login2");
        env.put("GRADSYNC_MASTER_PORT", "40100");
        assertEquals(new RendezvousConfig(5, 8, 1, "login2", 40100), RendezvousConfig.fromEnvironment(env));
        env.put("SLURM_PROCID", "8");
        assertMessage(env, "SLURM_PROCID=8 is not in [0, SLURM_NTASKS=8)");
    }

    @Test
    void aBatchScriptsOwnShellIsNoRank() {
        Map<String, String> env = srun();
        env.remove("SLURM_STEP_ID"); // sbatch's shell: SLURM_PROCID=0 and the allocation's task count, but no srun step
        env.put("SLURM_PROCID", "0");
        assertFalse(RendezvousConfig.isLaunched(env));
        assertMessage(env, "no launcher's variables are set");
    }

    @Test
    void theInnermostLauncherWinsAndContradictionsFailNamingBoth() {
        Map<String, String> env = srun(); // torchrun started by srun, one torchrun per node: other world sizes
        env.putAll(env());
        env.put("WORLD_SIZE", "16");
        env.put("RANK", "11");
        assertEquals(new RendezvousConfig(11, 16, 1, "node7", 29500), RendezvousConfig.fromEnvironment(env));
        Map<String, String> both = openMpi();
        both.putAll(env());
        both.put("OMPI_COMM_WORLD_RANK", "1"); // one world of 4, two ranks: RANK=2 and OMPI's 1
        assertMessage(both, "conflicting launcher variables: torchrun gives RANK=2 LOCAL_RANK=1 of WORLD_SIZE=4, "
                + "Open MPI OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 of OMPI_COMM_WORLD_SIZE=4");
        both.put("OMPI_COMM_WORLD_RANK", "2"); // agreeing: fine
        assertEquals(2, RendezvousConfig.fromEnvironment(both).rank());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {"node01;node01", "node[001-004];node001", "a[3,1],b2;a3", "rack[2-3]-n[05-06],x;rack2-n05", " gpu7 ;gpu7"})
    void theFirstHostOfASlurmNodeList(String list, String host) {
        assertEquals(host, Launchers.firstHost(list.strip()));
    }

    @Test
    void aBrokenNodeListIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Launchers.firstHost("gpu[01-02"));
        assertTrue(e.getMessage().contains("SLURM_JOB_NODELIST='gpu[01-02': a '[' without its ']'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Launchers.firstHost(",gpu1"));
    }

    private static void assertMessage(Map<String, String> env, String fragment) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RendezvousConfig.fromEnvironment(env));
        assertTrue(e.getMessage().contains(fragment), () -> "'" + fragment + "' in: " + e.getMessage());
    }
}
