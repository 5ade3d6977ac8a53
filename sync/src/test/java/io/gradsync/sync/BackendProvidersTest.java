package io.gradsync.sync;

import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.sync.backend.Backends;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.nccl.Nccl;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every registered backend keeps the contract the rest of gradsync relies on. */
class BackendProvidersTest {
    private final List<JvmDevice> devices = JvmRuntime.createDevices(3);

    @AfterEach
    void close() {
        devices.forEach(JvmDevice::close);
    }

    static List<BackendProvider> providers() {
        return Backends.all();
    }

    @Test
    void everyBackendButAutoHasOneProviderAndAutoHasADistinctOrder() {
        Set<SyncBackend> seen = EnumSet.noneOf(SyncBackend.class);
        Set<Integer> ranks = new HashSet<>();
        for (BackendProvider p : providers()) {
            assertTrue(seen.add(p.backend()), "two providers of " + p.backend());
            assertTrue(p.autoRank() < 0 || ranks.add(p.autoRank()), "two backends at auto rank " + p.autoRank());
        }
        assertEquals(EnumSet.complementOf(EnumSet.of(SyncBackend.AUTO)), seen);
        assertTrue(providers().stream().anyMatch(p -> p.autoRank() >= 0
                && p.autoRefusal(devices, new BackendProvider.AutoContext(Nccl.availability(), false)) == null),
                "auto must always find a backend for devices of one process");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void itsNamesParseToIt(BackendProvider p) {
        for (String name : p.backend().aliases()) {
            assertEquals(p.backend(), SyncBackend.parse(name));
            assertEquals(p.backend(), SyncBackend.parse(" " + name.toUpperCase(java.util.Locale.ROOT) + " "));
        }
    }

    /** Devices it cannot serve are refused at creation with its name in the message. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void aRefusalNamesTheBackend(BackendProvider p) {
        RuntimeException e;
        try {
            p.create(devices, SyncOptions.defaults()).close();
            return; // it takes JVM devices: its rejected calls are checked below
        } catch (IllegalArgumentException | UnsupportedOperationException refused) {
            e = refused;
        }
        assertTrue(e.getMessage().contains("backend " + p.backend().label()), e.getMessage());
    }

    /** The runtime it averages on (null: any) and whether it takes devices sharing a GPU, as each backend states them. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void itsRuntimeAndGpuSharingAreItsOwn(BackendProvider p) {
        DeviceRuntime runtime = switch (p.backend()) {
            case SINGLE, CPU -> null;
            case PTX, NCCL -> DeviceRuntime.CUDA;
            case OPENCL -> DeviceRuntime.OPENCL;
            case AUTO -> fail("auto has no provider");
        };
        assertEquals(runtime, p.runtime());
        assertEquals(p.backend() != SyncBackend.NCCL, p.sharesGpus(), "only nccl needs a GPU per device");
    }

    /**
     * What each provider refuses on this machine's JVM devices, in its own words: the wrong runtime,
     * the wrong device count, memory it cannot have. A new backend adds its row here.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void itsRefusalsSayWhy(BackendProvider p) {
        String ids = devices.stream().map(JvmDevice::id).toList().toString();
        switch (p.backend()) {
            case SINGLE -> assertRefused(IllegalArgumentException.class, "backend single takes exactly one device, got 3; "
                    + "use cpu, ptx, opencl or nccl to average several", p, devices, SyncOptions.defaults());
            case CPU -> assertRefused(IllegalArgumentException.class, "cpu backend: 3 devices need ", p, devices,
                    SyncOptions.defaults().withCpu(new CpuOptions(1L << 40, 2, 1)));
            case PTX -> assertRefused(UnsupportedOperationException.class, "backend ptx needs CUDA GPUs, got " + ids, p, devices,
                    SyncOptions.defaults());
            case OPENCL -> assertRefused(UnsupportedOperationException.class, "backend opencl needs OpenCL devices, got " + ids, p,
                    devices, SyncOptions.defaults());
            case NCCL -> {
                if (Nccl.availability().isAvailable()) {
                    assertRefused(IllegalArgumentException.class, "backend nccl needs CUDA GPUs, got " + ids, p, devices,
                            SyncOptions.defaults());
                } else {
                    assertRefused(UnsupportedOperationException.class, "backend nccl is unavailable: " + Nccl.availability().reason(),
                            p, devices, SyncOptions.defaults());
                }
            }
            case AUTO -> fail("auto has no provider");
        }
    }

    /** Why {@code auto} passes it over for JVM devices (null: it takes them). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void itsAutoRefusalSaysWhy(BackendProvider p) {
        String expected = switch (p.backend()) {
            case SINGLE -> "takes one device, got 3";
            case CPU -> null;
            case PTX -> "the devices are not CUDA GPUs";
            case OPENCL -> "never chosen by auto";
            case NCCL -> "the devices are not CUDA GPUs: " + devices.stream().map(JvmDevice::id).toList();
            case AUTO -> fail("auto has no provider");
        };
        assertEquals(expected, p.autoRefusal(devices, new BackendProvider.AutoContext(Nccl.availability(), false)));
    }

    /** The fused kernels' limit: opencl refuses a ninth device (on PoCL's logical devices, where OpenCL runs here). */
    @Test
    void openClAveragesAtMostEightDevices() {
        assumeTrue(OpenClRuntime.status().available(), "OpenCL unavailable here");
        List<OpenClDevice> nine = OpenClRuntime.logicalDevices(9);
        assertRefused(IllegalArgumentException.class, "backend opencl averages at most 8 devices (its fused kernels take 2..8 inputs), "
                + "got 9", Backends.of(SyncBackend.OPENCL), nine, SyncOptions.defaults());
    }

    private static void assertRefused(Class<? extends RuntimeException> type, String message, BackendProvider p,
            List<? extends Device> on, SyncOptions options) {
        RuntimeException e = assertThrows(type, () -> p.create(on, options).close());
        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }

    /** A rejected call changes no gradient, on every backend that runs here (on its own runtime's devices). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void aRejectedCallChangesNothing(BackendProvider p) {
        List<? extends Device> mine = p.backend() == SyncBackend.SINGLE ? devices.subList(0, 1)
                : p.runtime() == DeviceRuntime.OPENCL && OpenClRuntime.status().available() ? OpenClRuntime.logicalDevices(3)
                : devices;
        GradientSynchronizer sync;
        try {
            sync = p.create(mine, SyncOptions.defaults());
        } catch (IllegalArgumentException | UnsupportedOperationException notHere) {
            return; // refused above, naming itself
        }
        try (sync; ReplicaFixture f = ReplicaFixture.flat(mine, 1000, DType.FP32, 7)) {
            List<Replica> renamed = new ArrayList<>(f.replicas);
            renamed.set(0, new Replica(mine.getFirst(), List.of(new Gradient("other", f.buffers.getFirst(), 0, 10, DType.FP32))));
            List<Replica> shorter = new ArrayList<>(f.replicas);
            shorter.set(shorter.size() - 1, new Replica(mine.getLast(), List.of(new Gradient(
                    f.replicas.getLast().gradients().getFirst().name(), f.buffers.getLast(), 0, 999, DType.FP32))));
            if (mine.size() > 1) {
                assertThrows(IllegalArgumentException.class, () -> sync.synchronize(renamed));
                assertThrows(IllegalArgumentException.class, () -> sync.synchronize(shorter));
                assertThrows(IllegalArgumentException.class, () -> sync.synchronizeAsync(shorter));
                assertThrows(IllegalArgumentException.class, () -> sync.synchronize(f.replicas.reversed()));
            }
            assertThrows(IllegalArgumentException.class, () -> sync.synchronize(List.of()));
            f.assertUnchanged();
        }
    }

    /** Only a backend that averages across processes may run as one rank of several. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void oneRankOfSeveralNeedsABackendAcrossProcesses(BackendProvider p) {
        if (p.acrossProcesses()) {
            assertEquals(SyncBackend.NCCL, p.backend(), "only nccl averages across processes today");
            return;
        }
        List<JvmDevice> mine = p.backend() == SyncBackend.SINGLE ? devices.subList(0, 1) : devices;
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> Synchronizers.create(p.backend(),
                mine, SyncOptions.defaults(), Map.of("WORLD_SIZE", "2", "RANK", "0", "LOCAL_RANK", "0", "MASTER_ADDR", "127.0.0.1",
                        "MASTER_PORT", "29500")));
        assertTrue(e.getMessage().contains("averages only this process's replicas"), e.getMessage());
    }
}
