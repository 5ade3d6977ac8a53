package io.gradsync.sync.backend.ptx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.GpuSet;
import io.gradsync.sync.DType;
import io.gradsync.sync.PtxOptions;
import io.gradsync.tasks.cuda.CudaDevice;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The ptx synchronizer's peer access on real GPUs: what its option and the GPUs' P2P decide. */
@Tag("gpu")
class PtxPeersGpuTest {
    @Test
    void peerAccessFollowsTheOption() {
        List<CudaDevice> devices = GpuSet.own(2).cuda();
        try (PtxSynchronizer on = PtxSynchronizer.create(devices, PtxOptions.defaults(), true, DType.BF16);
                PtxSynchronizer off = PtxSynchronizer.create(devices, PtxOptions.defaults().withPeerAccess(false), true, DType.BF16)) {
            assertEquals(devices.get(0).canAccessPeer(devices.get(1)) && devices.get(1).canAccessPeer(devices.get(0)),
                    on.peerToPeer(0, 1));
            assertEquals(on.peerToPeer(0, 1) ? DType.BF16 : DType.FP32, on.wire(), "the wire is fused only where the pair has P2P");
            assertFalse(off.peerToPeer(0, 1));
            assertEquals(DType.FP32, off.wire(), "without P2P the wire goes around ptx");
        }
    }

    /** With NCCL missing, auto picks ptx where every pair of GPUs has P2P (the GPU node's case). */
    @Test
    void ptxIsUsableWhereEveryPairHasP2p() {
        List<CudaDevice> devices = GpuSet.own(2).cuda();
        boolean allPairs = devices.get(0).canAccessPeer(devices.get(1)) && devices.get(1).canAccessPeer(devices.get(0));
        assertEquals(allPairs, PtxSynchronizer.usable(devices));
        assertTrue(!allPairs || PtxSynchronizer.usable(devices));
    }
}
