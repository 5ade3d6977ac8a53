package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.backend.DeviceChecks;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import java.util.List;

/**
 * The ptx backend's topology: which pairs of GPUs read each other's memory directly (P2P), as a
 * checked matrix (symmetric, true on the diagonal), with what the schedule derives from it (whether
 * every pair has P2P, which GPUs some peer reaches only through host memory); and, on CUDA, how
 * that matrix is found and peer access enabled ({@link #enable}), and whether a set of devices is
 * one ptx would read directly everywhere ({@link #usable}).
 *
 * <p>Thread-safety: immutable once made; the static methods keep no state.
 */
final class PtxPeers {
    /** p2p[i][j]: GPUs i and j read each other's memory directly (true on the diagonal). */
    private final boolean[][] p2p;
    private final boolean allP2p;
    /** lacksPeer[i]: some GPU reads GPU i's slices through host memory. */
    private final boolean[] lacksPeer;

    /**
     * @param p2p p2p[i][j]: device i's kernels and copies reach device j's memory directly
     *            (symmetric, true on the diagonal); copied
     * @param n   the number of devices (rows checked)
     */
    PtxPeers(boolean[][] p2p, int n) {
        this.p2p = new boolean[n][];
        lacksPeer = new boolean[n];
        boolean all = true;
        for (int i = 0; i < n; i++) {
            this.p2p[i] = p2p[i].clone();
            for (int j = 0; j < n; j++) {
                if (p2p[i][j] != p2p[j][i] || (i == j && !p2p[i][j])) {
                    throw new IllegalArgumentException("peer matrix must be symmetric with a true diagonal");
                }
                lacksPeer[i] |= !p2p[i][j];
                all &= p2p[i][j];
            }
        }
        allP2p = all;
    }

    /** Whether GPUs {@code i} and {@code j} read each other directly. */
    boolean direct(int i, int j) {
        return p2p[i][j];
    }

    /** Whether every pair reads each other directly (no host staging anywhere). */
    boolean all() {
        return allP2p;
    }

    /** Whether some GPU reads GPU {@code i}'s slices through host memory. */
    boolean lacksPeer(int i) {
        return lacksPeer[i];
    }

    /**
     * The P2P matrix of {@code gpus}, peer access enabled both ways on every pair that has it (none
     * where {@link PtxOptions#peerAccess()} is off).
     */
    static boolean[][] enable(List<CudaDevice> gpus, PtxOptions ptx) {
        int n = gpus.size();
        boolean[][] p2p = new boolean[n][n];
        for (int i = 0; i < n; i++) {
            p2p[i][i] = true;
            for (int j = i + 1; j < n; j++) {
                CudaDevice a = gpus.get(i);
                CudaDevice b = gpus.get(j);
                boolean direct = ptx.peerAccess() && a.canAccessPeer(b) && b.canAccessPeer(a);
                if (direct) {
                    a.enablePeerAccess(b); // kernels on a read b's slices, copies on a pull from b
                    b.enablePeerAccess(a);
                }
                p2p[i][j] = direct;
                p2p[j][i] = direct;
            }
        }
        return p2p;
    }

    /** True when ptx would read every peer directly: 2..8 CUDA GPUs, every pair with P2P. */
    static boolean usable(List<? extends Device> devices) {
        if (devices.size() < 2 || devices.size() > DeviceChecks.MAX_DEVICE_REPLICAS) {
            return false;
        }
        try {
            for (Device a : devices) {
                for (Device b : devices) {
                    if (!(a instanceof CudaDevice ga) || !(b instanceof CudaDevice gb) || !ga.canAccessPeer(gb)) {
                        return false;
                    }
                }
            }
            return true;
        } catch (RuntimeException e) {
            return false; // a driver that cannot answer cannot be relied on for P2P either
        }
    }
}
