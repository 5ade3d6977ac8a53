package io.gradsync.nccl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Entry point of the NCCL binding: discovery, version, unique ids, communicator creation
 * and group calls.
 *
 * <p>NCCL is opened at run time with dlopen: the library named by the system property
 * {@code gradsync.nccl.library}, else the environment variable {@code GRADSYNC_NCCL_LIBRARY},
 * else {@code libnccl.so.2} on the default library search path. {@link #availability()}
 * says whether that worked and why not; it never throws. Every other method validates its
 * arguments first ({@link IllegalArgumentException}, {@link NullPointerException}) and then
 * throws {@link NcclException} where NCCL is unavailable or the call fails.
 *
 * <p>The JVM should run with {@code --enable-native-access=ALL-UNNAMED} (or the module's
 * name), since the shim is loaded with {@link System#load}. On the project's GPU node every
 * process using NCCL must have {@code NCCL_NVLS_ENABLE=0} in its environment (NVLink
 * multicast must stay off there).
 */
public final class Nccl {
    private Nccl() {
    }

    /** Whether NCCL loaded, and the reason if not. Loads on first call; never throws. */
    public static NcclAvailability availability() {
        return NativeLoader.availability();
    }

    /** Shorthand for {@code availability().isAvailable()}. */
    public static boolean isAvailable() {
        return availability().isAvailable();
    }

    /** The loaded NCCL's version ({@code ncclGetVersion}). */
    public static NcclVersion version() {
        requireAvailable("ncclGetVersion");
        return NcclVersion.fromCode(NcclNative.getVersion());
    }

    /** A fresh unique id ({@code ncclGetUniqueId}); rank 0 makes it and sends it to the others. */
    public static NcclUniqueId newUniqueId() {
        requireAvailable("ncclGetUniqueId");
        return NcclUniqueId.of(NcclNative.getUniqueId());
    }

    /**
     * One process, many GPUs ({@code ncclCommInitAll}): one communicator per device, rank i on
     * {@code devices[i]}. Drive them from one thread inside {@link #groupStart()} /
     * {@link #groupEnd()}, or from one thread each.
     *
     * @param devices distinct CUDA device ordinals, at least one
     * @return the communicators in rank order; close each (see {@link #closeAll})
     */
    public static List<NcclComm> initAll(int... devices) {
        Objects.requireNonNull(devices, "devices");
        if (devices.length == 0) {
            throw new IllegalArgumentException("at least one device is needed");
        }
        for (int i = 0; i < devices.length; i++) {
            if (devices[i] < 0) {
                throw new IllegalArgumentException("device ordinal must be >= 0: " + devices[i]);
            }
            for (int j = 0; j < i; j++) {
                // NCCL does not support one device twice in a communicator and may hang.
                if (devices[j] == devices[i]) {
                    throw new IllegalArgumentException("device " + devices[i] + " listed twice");
                }
            }
        }
        requireAvailable("ncclCommInitAll");
        long[] handles = NcclNative.commInitAll(devices.clone());
        List<NcclComm> comms = new ArrayList<>(handles.length);
        for (long handle : handles) {
            comms.add(new NcclComm(handle, -1, CommCalls.NATIVE));
        }
        return Collections.unmodifiableList(comms);
    }

    /**
     * One rank of a communicator of {@code nranks} ranks ({@code ncclCommInitRank}), typically
     * one process per GPU. The shim first makes the primary context of {@code device} current
     * on the calling thread (CUDA driver API through {@code libcuda.so.1}), the same context
     * JCuda's driver API uses, and keeps it retained until the communicator is closed.
     *
     * <p>Blocks until all ranks have joined, unless called between {@link #groupStart()} and
     * {@link #groupEnd()} (then {@code groupEnd} waits), which is how one thread makes several ranks.
     *
     * @param device CUDA device ordinal for this rank, &gt;= 0
     * @param nranks ranks in the communicator, &gt; 0
     * @param id     the id rank 0 made with {@link #newUniqueId()}, the same on every rank
     * @param rank   this rank, in {@code [0, nranks)}
     */
    public static NcclComm initRank(int device, int nranks, NcclUniqueId id, int rank) {
        if (device < 0) {
            throw new IllegalArgumentException("device ordinal must be >= 0: " + device);
        }
        return initRank0(device, nranks, id, rank);
    }

    /**
     * As {@link #initRank} but on whatever CUDA device is current on the calling thread: the
     * caller must have made the right context current (e.g. {@code cuCtxSetCurrent} of the
     * device's primary context) before this call, or NCCL uses device 0.
     */
    public static NcclComm initRankOnCurrentDevice(int nranks, NcclUniqueId id, int rank) {
        return initRank0(-1, nranks, id, rank);
    }

    private static NcclComm initRank0(int device, int nranks, NcclUniqueId id, int rank) {
        Objects.requireNonNull(id, "id");
        if (nranks <= 0) {
            throw new IllegalArgumentException("nranks must be > 0: " + nranks);
        }
        if (rank < 0 || rank >= nranks) {
            throw new IllegalArgumentException("rank " + rank + " is not in [0, " + nranks + ")");
        }
        requireAvailable("ncclCommInitRank");
        long handle = NcclNative.commInitRank(device, nranks, id.bytes(), rank);
        return new NcclComm(handle, device, CommCalls.NATIVE);
    }

    /** Starts a group ({@code ncclGroupStart}) on this thread; calls until {@link #groupEnd()} do not block. */
    public static void groupStart() {
        requireAvailable("ncclGroupStart");
        NcclNative.groupStart();
    }

    /** Ends a group ({@code ncclGroupEnd}): launches the grouped work, or waits for grouped inits. */
    public static void groupEnd() {
        requireAvailable("ncclGroupEnd");
        NcclNative.groupEnd();
    }

    /**
     * Closes every communicator, even when some fail; the first failure is thrown with the
     * others added as suppressed.
     */
    public static void closeAll(Iterable<? extends NcclComm> comms) {
        Objects.requireNonNull(comms, "comms");
        RuntimeException first = null;
        for (NcclComm comm : comms) {
            try {
                if (comm != null) {
                    comm.close();
                }
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** NCCL's text for a result code ({@code ncclGetErrorString}), or a local text where NCCL is absent. */
    public static String errorString(int code) {
        if (isAvailable()) {
            String text = NcclNative.errorString(code);
            if (text != null) {
                return text;
            }
        }
        return NcclResult.fromCode(code).name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
    }

    /** NCCL's last error not tied to a communicator ({@code ncclGetLastError(NULL)}). */
    public static String lastError() {
        requireAvailable("ncclGetLastError");
        String text = NcclNative.lastError(0L);
        return text == null ? "" : text;
    }

    private static void requireAvailable(String call) {
        NcclAvailability a = availability();
        if (!a.isAvailable()) {
            throw new NcclException(call, NcclException.NOT_AN_NCCL_RESULT, "NCCL is not available: " + a.reason(), null);
        }
    }
}
