package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.DType;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.backend.wire.WireSynchronizer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The 16-bit wire fused into ptx's schedule against the wire around ptx, with the PTX kernels and
 * CUDA graphs, on replicas that are logical devices of the first GPU (P2P between them is the
 * GPU's own memory): the mixed layout of {@link PtxScheduleTest}, byte for byte.
 */
@Tag("gpu")
class PtxFusedWireGpuTest {
    static Stream<Arguments> shapes() {
        return Stream.of(2, 3).flatMap(n -> Stream.of(DType.BF16, DType.FP16).flatMap(w -> Stream.of(PtxOptions.Gather.values())
                .flatMap(g -> Stream.of(false, true).map(sc -> Arguments.of(n, w, g, sc)))));
    }

    @ParameterizedTest(name = "N={0} {1} wire, gather={2}, reduce-scatter {3}")
    @MethodSource("shapes")
    void theFusedWireGivesTheWireAroundItsBytes(int n, DType wire, PtxOptions.Gather how, boolean scatter) {
        assertTrue(CudaRuntime.status().available(), () -> "gpu-tagged test run without a CUDA GPU: " + CudaRuntime.status().describe());
        PtxOptions o = PtxOptions.defaults().withOneShotMaxBytes(4096).withGather(how).withGatherLanes(2);
        List<CudaDevice> mine = CudaRuntime.logicalDevices(n, 1);
        List<CudaDevice> theirs = CudaRuntime.logicalDevices(n, 1);
        try (PtxSynchronizer fused = PtxSynchronizer.create(mine, o, true, wire);
                WireSynchronizer around = new WireSynchronizer(PtxSynchronizer.create(theirs, o, true, DType.FP32), wire, theirs, true)) {
            PtxScheduleTest.assertFusedWireGivesTheWireAround(fused, around, mine, theirs, scatter, ThreadLocalRandom.current().nextLong());
        }
    }
}
