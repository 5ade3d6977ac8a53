package io.gradsync.sync.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.nccl.NcclDataType;
import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.Shards;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.nccl.NcclCalls.Call;
import io.gradsync.sync.backend.nccl.NcclCalls.Op;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which NCCL calls each collective makes of a layout (shards, roots, NCCL's in-place addresses),
 * and what the ranks' collective check tells apart; no NCCL needed.
 */
class NcclCallsTest {
    private List<JvmDevice> devices;
    private final Map<DeviceBuffer, Long> bases = new IdentityHashMap<>();

    @BeforeEach
    void setUp() {
        devices = JvmRuntime.createDevices(4);
    }

    @AfterEach
    void tearDown() {
        devices.forEach(JvmDevice::close);
    }

    private long address(Gradient g) {
        return bases.computeIfAbsent(g.buffer(), b -> (bases.size() + 1L) << 32) + g.byteOffset();
    }

    private long base(List<Replica> replicas, int r) {
        return bases.get(replicas.get(r).gradients().getFirst().buffer());
    }

    /** {@code n} replicas, each one buffer holding gradients of these counts and types back to back. */
    private List<Replica> replicas(int n, long[] counts, DType[] types) {
        List<Replica> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            DeviceBuffer b = devices.get(r).allocate(1 << 16);
            Replica.Builder replica = Replica.on(devices.get(r));
            long at = 0;
            for (int g = 0; g < counts.length; g++) {
                replica.add(new Gradient("g" + g, b, at, counts[g], types[g]));
                at += counts[g] * types[g].bytes();
            }
            out.add(replica.build());
        }
        return out;
    }

    private List<Replica> fp32(int n, long... counts) {
        DType[] types = new DType[counts.length];
        java.util.Arrays.fill(types, DType.FP32);
        return replicas(n, counts, types);
    }

    @Test
    void theAverageAndTheBroadcastGoByRunsMergedWhereAllowed() {
        List<Replica> rs = fp32(2, 100, 50);
        NcclPlan p = NcclPlan.of(rs, this::address);
        NcclCalls avg = p.calls(Collective.AVERAGE, true, 0, 2);
        assertEquals(1, avg.calls.size());
        Call a = avg.calls.getFirst();
        assertEquals(Op.ALL_REDUCE, a.op());
        assertEquals(150, a.count());
        assertEquals(-1, a.root());
        assertArrayEquals(new long[] {base(rs, 0), base(rs, 1)}, a.send());
        assertArrayEquals(a.send(), a.recv(), "in place");

        NcclCalls b = p.calls(Collective.broadcast(1, 2), true, 0, 2);
        assertEquals(List.of(Op.BROADCAST), b.calls.stream().map(Call::op).toList());
        assertEquals(1, b.calls.getFirst().root());
        assertEquals(150, b.calls.getFirst().count());
        assertArrayEquals(b.calls.getFirst().send(), b.calls.getFirst().recv(), "in place");
        // Where the ranks could not agree on merged runs: one call per gradient.
        NcclCalls each = p.calls(Collective.broadcast(1, 2), false, 0, 2);
        assertEquals(List.of(100L, 50L), each.calls.stream().map(Call::count).toList());
        assertEquals(base(rs, 1) + 400, each.calls.get(1).send()[1]);

        assertTrue(avg.description.startsWith("the all-reduce of 2 gradient(s), 150 elements"), avg.description);
        assertTrue(avg.description.endsWith("in 1 call(s)"), avg.description);
        assertTrue(b.description.startsWith("the broadcast from replica 1 of 2 gradient(s)"), b.description);
        assertEquals("the layout check before " + b.description, b.checkDescription);
        assertSame(b, p.calls(Collective.broadcast(1, 2), true, 0, 2), "made once per plan");
    }

    @Test
    void evenGradientsUseNcclsInPlaceReduceScatterAndAllGather() {
        List<Replica> rs = fp32(4, 8);
        NcclPlan p = NcclPlan.of(rs, this::address);
        Call rsCall = p.calls(Collective.REDUCE_SCATTER, true, 0, 4).calls.getFirst();
        Call agCall = p.calls(Collective.ALL_GATHER, true, 0, 4).calls.getFirst();
        assertEquals(Op.REDUCE_SCATTER, rsCall.op());
        assertEquals(Op.ALL_GATHER, agCall.op());
        assertEquals(2, rsCall.count(), "NCCL's count is per rank");
        assertEquals(2, agCall.count());
        for (int r = 0; r < 4; r++) {
            long own = base(rs, r) + r * 2L * Float.BYTES; // replica r's shard
            assertEquals(base(rs, r), rsCall.send()[r]);
            assertEquals(own, rsCall.recv()[r]);
            assertEquals(own, agCall.send()[r]);
            assertEquals(base(rs, r), agCall.recv()[r]);
        }
    }

    @Test
    void anUnevenTailGoesShardByShardToItsOwner() {
        List<Replica> rs = fp32(4, 10, 1); // shards of 3, 3, 3, 1; then one element, on replica 0 alone
        NcclPlan p = NcclPlan.of(rs, this::address);
        NcclCalls scatter = p.calls(Collective.REDUCE_SCATTER, true, 0, 4);
        NcclCalls gather = p.calls(Collective.ALL_GATHER, true, 0, 4);
        assertEquals(5, scatter.calls.size());
        for (int c = 0; c < 5; c++) {
            Call s = scatter.calls.get(c);
            Call g = gather.calls.get(c);
            assertEquals(Op.REDUCE, s.op());
            assertEquals(Op.BROADCAST, g.op());
            int h = c < 4 ? c : 0;
            long offset = c < 4 ? Shards.range(10, 4, h).offset() * Float.BYTES : 40;
            long count = c < 4 ? Shards.range(10, 4, h).count() : 1;
            for (Call call : List.of(s, g)) {
                assertEquals(h, call.root(), "shard " + h + "'s owner is the root");
                assertEquals(count, call.count());
                for (int r = 0; r < 4; r++) {
                    assertEquals(base(rs, r) + offset, call.send()[r]);
                    assertEquals(call.send()[r], call.recv()[r], "in place");
                }
            }
        }
        assertTrue(scatter.description.startsWith("the reduce-scatter of 2 gradient(s), 11 elements"), scatter.description);
        assertTrue(scatter.description.endsWith("in 5 call(s)"), scatter.description);
        assertTrue(gather.description.startsWith("the all-gather of 2 gradient(s)"), gather.description);
    }

    /** Back-to-back gradients are one run for the average, but shards are per gradient; empty ones move nothing. */
    @Test
    void shardedCollectivesGoGradientByGradientInTheirOwnType() {
        List<Replica> rs = replicas(2, new long[] {6, 0, 4, 3}, new DType[] {DType.BF16, DType.FP32, DType.BF16, DType.FP16});
        NcclPlan p = NcclPlan.of(rs, this::address);
        assertEquals(2, p.calls(Collective.AVERAGE, true, 0, 2).calls.size()); // bf16 6+4 merged (the empty fp32 between), fp16 alone
        List<Call> calls = p.calls(Collective.REDUCE_SCATTER, true, 0, 2).calls;
        assertEquals(List.of(Op.REDUCE_SCATTER, Op.REDUCE_SCATTER, Op.REDUCE, Op.REDUCE),
                calls.stream().map(Call::op).toList());
        assertEquals(List.of(NcclDataType.BFLOAT16, NcclDataType.BFLOAT16, NcclDataType.FLOAT16, NcclDataType.FLOAT16),
                calls.stream().map(Call::type).toList());
        assertEquals(List.of(3L, 2L, 2L, 1L), calls.stream().map(Call::count).toList());
        long b1 = base(rs, 1);
        assertEquals(b1 + 3 * 2, calls.get(0).recv()[1], "replica 1's bf16 shard starts 3 elements in");
        assertEquals(b1 + 12 + 2 * 2, calls.get(1).recv()[1]);
        assertEquals(b1 + 20 + 2 * 2, calls.get(3).send()[1], "fp16 shard 1 at element 2");
        assertEquals(1, calls.get(3).root());
    }

    /** One process per GPU: the one local replica's shard is its rank's. */
    @Test
    void aRanksShardIsAtItsGlobalIndex() {
        List<Replica> rs = fp32(1, 8);
        NcclPlan p = NcclPlan.of(rs, this::address);
        Call s = p.calls(Collective.REDUCE_SCATTER, true, 2, 4).calls.getFirst();
        Call g = p.calls(Collective.ALL_GATHER, true, 2, 4).calls.getFirst();
        assertEquals(base(rs, 0) + 2 * 2 * Float.BYTES, s.recv()[0]);
        assertEquals(base(rs, 0) + 2 * 2 * Float.BYTES, g.send()[0]);
        List<Call> uneven = NcclPlan.of(fp32(1, 7), this::address).calls(Collective.REDUCE_SCATTER, true, 3, 4).calls;
        assertEquals(List.of(0, 1, 2, 3), uneven.stream().map(Call::root).toList(), "every rank takes part in every shard");
        assertEquals(List.of(2L, 2L, 2L, 1L), uneven.stream().map(Call::count).toList());
    }

    @Test
    void aRootOutsideTheWorldIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Collective.broadcast(4, 4));
        assertTrue(e.getMessage().contains("root 4") && e.getMessage().contains("0..3"), e.getMessage());
    }

    /** The ranks' check vectors, max-reduced on the host as NCCL would. */
    private MemorySegment reduced(List<NcclPlan> plans, List<Collective> calls) {
        Arena arena = Arena.ofAuto();
        MemorySegment max = null;
        for (int q = 0; q < calls.size(); q++) {
            MemorySegment v = arena.allocate(NcclLayoutCheck.SCRATCH_BYTES, Float.BYTES);
            NcclLayoutCheck.fill(v, plans.get(q), calls.get(q));
            if (max == null) {
                max = v;
            } else {
                for (long i = 0; i < NcclLayoutCheck.SCRATCH_BYTES / Float.BYTES; i++) {
                    max.setAtIndex(ValueLayout.JAVA_FLOAT, i, Math.max(max.getAtIndex(ValueLayout.JAVA_FLOAT, i),
                            v.getAtIndex(ValueLayout.JAVA_FLOAT, i)));
                }
            }
        }
        return max;
    }

    @Test
    void theCheckTellsCollectivesAndRootsApart() {
        NcclPlan p = NcclPlan.of(fp32(1, 8), this::address);
        List<NcclPlan> four = List.of(p, p, p, p);
        assertNull(NcclLayoutCheck.collectiveMismatch(reduced(four, List.of(Collective.AVERAGE, Collective.AVERAGE,
                Collective.AVERAGE, Collective.AVERAGE)), 4));
        assertNull(NcclLayoutCheck.collectiveMismatch(reduced(four, List.of(Collective.broadcast(3, 4),
                Collective.broadcast(3, 4), Collective.broadcast(3, 4), Collective.broadcast(3, 4))), 4));

        String kinds = NcclLayoutCheck.collectiveMismatch(reduced(four, List.of(Collective.REDUCE_SCATTER,
                Collective.REDUCE_SCATTER, Collective.REDUCE_SCATTER, Collective.ALL_GATHER)), 4);
        assertEquals("nccl: the 4 ranks called different collectives (at least the reduce-scatter and the all-gather)", kinds);
        String withAverage = NcclLayoutCheck.collectiveMismatch(reduced(List.of(p, p), List.of(Collective.AVERAGE,
                Collective.broadcast(0, 2))), 2);
        assertEquals("nccl: the 2 ranks called different collectives (at least the average and the broadcast)", withAverage);
        String roots = NcclLayoutCheck.collectiveMismatch(reduced(four, List.of(Collective.broadcast(0, 4),
                Collective.broadcast(2, 4), Collective.broadcast(0, 4), Collective.broadcast(0, 4))), 4);
        assertEquals("nccl: the 4 ranks called the broadcast with different roots (at least replicas 0 and 2)", roots);
    }
}
