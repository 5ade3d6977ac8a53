package io.gradsync.sync;

import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.sync.backend.Backends;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.nccl.Nccl;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
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

    /** A rejected call changes no gradient, on every backend that runs here. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void aRejectedCallChangesNothing(BackendProvider p) {
        List<JvmDevice> mine = p.backend() == SyncBackend.SINGLE ? devices.subList(0, 1) : devices;
        GradientSynchronizer sync;
        try {
            sync = p.create(mine, SyncOptions.defaults());
        } catch (IllegalArgumentException | UnsupportedOperationException notHere) {
            return; // refused above, naming itself
        }
        try (sync; ReplicaFixture f = ReplicaFixture.flat(mine, 1000, DType.FP32, 7)) {
            List<Replica> bad = new ArrayList<>(f.replicas);
            bad.set(0, new Replica(mine.getFirst(), List.of(new Gradient("other", f.buffers.getFirst(), 0, 10, DType.FP32))));
            if (mine.size() > 1) {
                assertThrows(IllegalArgumentException.class, () -> sync.synchronize(bad));
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
