package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Under a launcher that says the world is larger, backends that cannot span processes refuse. */
class LaunchedWorldTest {
    private final List<? extends Device> devices = JvmRuntime.createDevices(2);

    @AfterEach
    void close() {
        devices.forEach(Device::close);
    }

    @ParameterizedTest
    @ValueSource(strings = {"cpu", "ptx", "opencl", "single"})
    void aWorldOfSeveralProcessesIsRefused(String backend) {
        List<? extends Device> d = backend.equals("single") ? devices.subList(0, 1) : devices;
        Map<String, String> env = Map.of("RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0");
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> Synchronizers.create(SyncBackend.parse(backend), d, SyncOptions.defaults(), env));
        assertTrue(e.getMessage().contains("WORLD_SIZE=2") && e.getMessage().contains("use nccl"), e.getMessage());
    }

    @Test
    void aWorldOfSeveralSrunTasksIsRefusedNamingSlurmsVariable() {
        Map<String, String> env = Map.of("SLURM_PROCID", "1", "SLURM_NTASKS", "4", "SLURM_LOCALID", "1", "SLURM_STEP_ID", "0");
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults(), env));
        assertTrue(e.getMessage().contains("SLURM_NTASKS=4 says this process is one of 4 ranks"), e.getMessage());
        // a batch script's own shell (no srun step) is one process
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults(),
                Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "4"))) {
            assertEquals(2, sync.worldSize());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", ""})
    void aWorldOfOneOrNoneIsThisProcess(String world) {
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults(),
                Map.of("WORLD_SIZE", world))) {
            assertEquals(2, sync.worldSize());
        }
    }

    /** A launcher variable that is not a number is refused by every backend, as auto and nccl refuse it. */
    @Test
    void aWorldSizeThatIsNotANumberIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Synchronizers.create(SyncBackend.CPU, devices,
                SyncOptions.defaults(), Map.of("RANK", "0", "WORLD_SIZE", "abc")));
        assertTrue(e.getMessage().contains("WORLD_SIZE='abc' is not an integer"), e.getMessage());
    }
}
