package io.gradsync.sync.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.nccl.NcclDataType;
import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How the nccl backend groups a layout into calls, and what its layout hashes see; no NCCL needed. */
class NcclPlanTest {
    private List<JvmDevice> devices;

    @BeforeEach
    void setUp() {
        devices = JvmRuntime.createDevices(2);
    }

    @AfterEach
    void tearDown() {
        devices.forEach(JvmDevice::close);
    }

    private final Map<DeviceBuffer, Long> bases = new IdentityHashMap<>();

    private long address(Gradient g) {
        return bases.computeIfAbsent(g.buffer(), b -> (bases.size() + 1L) << 32) + g.byteOffset();
    }

    private static Replica replica(JvmDevice d, DeviceBuffer b, long... offsetCountPairs) {
        Replica.Builder r = Replica.on(d);
        for (int i = 0; i < offsetCountPairs.length; i += 2) {
            DType t = i / 2 == 3 ? DType.BF16 : DType.FP32;
            r.add(new Gradient("g" + i / 2, b, offsetCountPairs[i], offsetCountPairs[i + 1], t));
        }
        return r.build();
    }

    @Test
    void backToBackGradientsOfOneBufferAndTypeBecomeOneCall() {
        DeviceBuffer b0 = devices.get(0).allocate(8192);
        DeviceBuffer b1 = devices.get(1).allocate(8192);
        // g0+g1 adjoin; g2 after a gap; g3 is bf16 right after g2; g4 is empty and needs no call
        long[] layout = {0, 100, 400, 50, 800, 10, 840, 6, 852, 0};
        List<Replica> replicas = List.of(replica(devices.get(0), b0, layout), replica(devices.get(1), b1, layout));
        NcclPlan p = NcclPlan.of(replicas, this::address);
        assertArrayEquals(new long[] {150, 10, 6}, p.merged.count());
        assertArrayEquals(new NcclDataType[] {NcclDataType.FLOAT32, NcclDataType.FLOAT32, NcclDataType.BFLOAT16},
                p.merged.type());
        for (int r = 0; r < 2; r++) {
            long base = bases.get(r == 0 ? b0 : b1);
            assertArrayEquals(new long[] {base, base + 800, base + 840}, p.merged.address()[r]);
            assertArrayEquals(new long[] {base, base + 400, base + 800, base + 840}, p.each.address()[r]);
        }
        assertArrayEquals(new long[] {100, 50, 10, 6}, p.each.count());
        assertEquals(166, p.total);
        assertTrue(p.madeFor(replicas));
        assertTrue(!p.madeFor(List.of(replicas.get(1), replicas.get(0))));
    }

    @Test
    void gradientsAdjoiningOnOneReplicaOnlyStaySeparate() {
        DeviceBuffer b0 = devices.get(0).allocate(8192);
        DeviceBuffer b1 = devices.get(1).allocate(8192);
        List<Replica> replicas = List.of(replica(devices.get(0), b0, 0, 100, 400, 50),
                replica(devices.get(1), b1, 0, 100, 512, 50));
        NcclPlan p = NcclPlan.of(replicas, this::address);
        assertArrayEquals(new long[] {100, 50}, p.merged.count());
    }

    @Test
    void layoutHashesSeeNamesSizesAndTypesButNotAddresses() {
        DeviceBuffer b0 = devices.get(0).allocate(8192);
        DeviceBuffer b1 = devices.get(0).allocate(8192);
        NcclPlan a = NcclPlan.of(List.of(replica(devices.get(0), b0, 0, 100, 400, 50)), this::address);
        NcclPlan same = NcclPlan.of(List.of(replica(devices.get(0), b1, 0, 100, 400, 50)), this::address);
        NcclPlan split = NcclPlan.of(List.of(replica(devices.get(0), b1, 0, 100, 512, 50)), this::address);
        NcclPlan renamed = NcclPlan.of(List.of(Replica.on(devices.get(0))
                .add(new Gradient("w", b1, 0, 100, DType.FP32)).add(new Gradient("g1", b1, 400, 50, DType.FP32)).build()),
                this::address);
        assertEquals(a.layoutHash, same.layoutHash);
        assertEquals(a.callHash, same.callHash);
        assertEquals(a.layoutHash, split.layoutHash);
        assertNotEquals(a.callHash, split.callHash, "one call against two must be told apart");
        assertNotEquals(a.layoutHash, renamed.layoutHash);
        assertEquals(a.total, renamed.total);
        assertTrue(a.layout().contains("2 gradient(s), 150 elements: 'g0' fp32 x 100, 'g1' fp32 x 50"), a.layout());
    }
}
