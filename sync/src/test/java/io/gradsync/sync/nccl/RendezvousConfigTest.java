package io.gradsync.sync.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The torchrun variables: parsed exactly, and every error names the variable at fault. */
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

    private static void assertMessage(Map<String, String> env, String fragment) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RendezvousConfig.fromEnvironment(env));
        assertTrue(e.getMessage().contains(fragment), () -> "'" + fragment + "' in: " + e.getMessage());
    }
}
