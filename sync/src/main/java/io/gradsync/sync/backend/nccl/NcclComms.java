package io.gradsync.sync.backend.nccl;

import io.gradsync.sync.NcclOptions;
import io.gradsync.sync.SyncTimeoutException;
import static io.gradsync.sync.backend.Resources.closeQuietly;

import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;

import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclComm;
import io.gradsync.nccl.NcclUniqueId;
import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaEvent;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.cuda.driver.CudaHandles;
import io.gradsync.tasks.device.HostBuffer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

/**
 * The nccl backend's communicator setup: this process's place in the job (rank, world size, local
 * rank, one process or one rank per process), its communicators (one per local device; a rank's
 * own made within the timeout by {@link #initRankWithin}), and per device what driving them takes:
 * the primary context (retained, so one thread can query every device's stream under its own
 * context), our stream (object, driver handle and address), the events on the caller's stream and
 * ours, and the small scratch the layout check and the barrier reduce; made together, with
 * everything made so far released (communicators included) if one of them fails, and released
 * together by {@link #release}.
 *
 * <p>Thread-safety: the fields are fixed once made; the synchronizer uses them under its lock, and
 * its watch (on the watchdog thread too) only reads the communicators to abort them.
 */
final class NcclComms {
    final List<CudaDevice> devices;
    final List<NcclComm> comms;
    final CudaStream[] streams;
    final CUstream[] streamHandles;
    /** Primary contexts, retained here: one thread polls every device's stream, each under its own context. */
    final CUcontext[] contexts;
    final long[] streamAddresses;
    final CudaBuffer[] scratch;
    final HostBuffer scratchHost;
    /** Per device: recorded on the caller's stream, and on ours after the all-reduce. */
    final CudaEvent[] readyEvents;
    final CudaEvent[] finishedEvents;
    final int rank;
    final int worldSize;
    final int localRank;
    final boolean multiProcess;

    /** Takes over {@code comms}: closed here if the devices' resources cannot be made. */
    NcclComms(List<CudaDevice> devices, List<NcclComm> comms, int rank, int worldSize, int localRank,
            boolean multiProcess) {
        this.devices = List.copyOf(devices);
        this.comms = comms;
        this.rank = rank;
        this.worldSize = worldSize;
        this.localRank = localRank;
        this.multiProcess = multiProcess;
        int n = devices.size();
        streams = new CudaStream[n];
        streamHandles = new CUstream[n];
        contexts = new CUcontext[n];
        streamAddresses = new long[n];
        scratch = new CudaBuffer[n];
        readyEvents = new CudaEvent[n];
        finishedEvents = new CudaEvent[n];
        HostBuffer host = null;
        try {
            for (int r = 0; r < n; r++) {
                // Roots and shards are global replica indices, given to NCCL as ranks: they must agree.
                int nrank = comms.get(r).userRank();
                int ncount = comms.get(r).count();
                if (nrank != rank + r || ncount != worldSize) {
                    throw new IllegalStateException("nccl: the communicator of " + devices.get(r).id() + " is rank " + nrank
                            + " of " + ncount + ", expected rank " + (rank + r) + " of " + worldSize);
                }
            }
            for (int r = 0; r < n; r++) {
                contexts[r] = retainPrimaryContext(devices.get(r));
                streams[r] = devices.get(r).createStream();
                streamHandles[r] = CudaHandles.stream(streams[r]);
                streamAddresses[r] = streams[r].address();
                scratch[r] = devices.get(r).allocate(NcclLayoutCheck.SCRATCH_BYTES);
                readyEvents[r] = devices.get(r).createUntimedEvent();
                finishedEvents[r] = devices.get(r).createUntimedEvent();
            }
            host = devices.getFirst().allocateHost(NcclLayoutCheck.SCRATCH_BYTES);
        } catch (RuntimeException e) {
            for (int r = 0; r < n; r++) {
                closeQuietly(streams[r]);
                closeQuietly(scratch[r]);
                closeQuietly(readyEvents[r]);
                closeQuietly(finishedEvents[r]);
            }
            closeQuietly(host);
            releaseContexts();
            Nccl.closeAll(comms);
            throw e;
        }
        scratchHost = host;
    }

    /** The device's primary context (the one JCuda's device and NCCL use), retained until close. */
    private static CUcontext retainPrimaryContext(CudaDevice device) {
        CUdevice handle = new CUdevice();
        CUcontext context = new CUcontext();
        int rc = cuDeviceGet(handle, device.ordinal());
        if (rc == CUresult.CUDA_SUCCESS) {
            rc = cuDevicePrimaryCtxRetain(context, handle);
        }
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException("nccl: cuDevicePrimaryCtxRetain failed on " + device.id() + ": "
                    + CUresult.stringFor(rc));
        }
        return context;
    }

    private void releaseContexts() {
        for (int r = 0; r < contexts.length; r++) {
            if (contexts[r] != null) {
                CUdevice handle = new CUdevice();
                if (cuDeviceGet(handle, devices.get(r).ordinal()) == CUresult.CUDA_SUCCESS) {
                    cuDevicePrimaryCtxRelease(handle);
                }
                contexts[r] = null;
            }
        }
    }

    /**
     * {@code ncclCommInitRank} cannot time out by itself (a rank that died after the rendezvous
     * leaves it waiting), so it runs on a daemon thread that we stop waiting for at the timeout.
     */
    static NcclComm initRankWithin(CudaDevice device, RendezvousConfig config, NcclUniqueId id,
            NcclOptions options) {
        AtomicBoolean gaveUp = new AtomicBoolean();
        FutureTask<NcclComm> init = new FutureTask<>(() -> {
            NcclComm comm = Nccl.initRank(device.ordinal(), config.worldSize(), id, config.rank());
            if (gaveUp.get()) {
                comm.abort(); // nobody waits for it any more
            }
            return comm;
        });
        Thread.ofPlatform().daemon().name("gradsync-nccl-init-rank" + config.rank()).start(init);
        try {
            return init.get(options.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            gaveUp.set(true);
            if (init.isDone() && !init.isCancelled()) {
                try {
                    init.get().abort();
                } catch (Exception ignored) {
                    // it failed after all: nothing to release
                }
            }
            throw new SyncTimeoutException(String.format(Locale.ROOT,
                    "nccl: rank %d (%s): ncclCommInitRank of %d ranks did not finish within the %.1f s timeout"
                            + " (a rank died after the rendezvous?)",
                    config.rank(), device.id(), config.worldSize(), options.timeout().toNanos() / 1e9));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("nccl: rank " + config.rank() + ": ncclCommInitRank failed", cause);
        } catch (InterruptedException e) {
            gaveUp.set(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("nccl: rank " + config.rank() + ": interrupted in ncclCommInitRank", e);
        }
    }

    /**
     * Frees the streams, scratch and events and releases the primary contexts; the communicators
     * are the caller's to close first. Not after an abort: freeing waits for the device.
     */
    void release() {
        for (int r = 0; r < streams.length; r++) {
            closeQuietly(streams[r]);
            closeQuietly(scratch[r]);
            closeQuietly(readyEvents[r]);
            closeQuietly(finishedEvents[r]);
        }
        closeQuietly(scratchHost);
        releaseContexts();
    }
}
