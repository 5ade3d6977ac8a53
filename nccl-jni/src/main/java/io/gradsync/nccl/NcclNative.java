package io.gradsync.nccl;

/**
 * The JNI entry points of {@code libgradsync_nccl.so}. Callers validate every argument and
 * make sure the shim is loaded first; each method here maps to one C function in
 * {@code src/main/c/gradsync_nccl.c} and throws {@link NcclException} on any failure.
 */
final class NcclNative {
    private NcclNative() {
    }

    /** dlopens NCCL; returns null on success, else the reason (dlerror text). */
    static native String load(String library);

    /** Path of the file NCCL was actually loaded from, or null. */
    static native String loadedPath();

    /** NCCL symbols the loaded library does not export. */
    static native String[] missingSymbols();

    static native int getVersion();

    /** ncclGetErrorString, or null where NCCL is not loaded. */
    static native String errorString(int code);

    static native String lastError(long comm);

    static native byte[] getUniqueId();

    static native long[] commInitAll(int[] devices);

    /** device &lt; 0: use the device current on the calling thread. */
    static native long commInitRank(int device, int nranks, byte[] uniqueId, int rank);

    static native void allReduce(long comm, long send, long recv, long count, int type, int op, long stream);

    static native void broadcast(long comm, long send, long recv, long count, int type, int root, long stream);

    static native void reduce(long comm, long send, long recv, long count, int type, int op, int root, long stream);

    /** recvCount: the elements each rank receives; send holds recvCount times the rank count. */
    static native void reduceScatter(long comm, long send, long recv, long recvCount, int type, int op, long stream);

    /** sendCount: the elements each rank sends; recv holds sendCount times the rank count. */
    static native void allGather(long comm, long send, long recv, long sendCount, int type, long stream);

    static native void groupStart();

    static native void groupEnd();

    static native void commFinalize(long comm);

    /** device &gt;= 0: also release the primary context retained at init. */
    static native void commDestroy(long comm, int device);

    static native void commAbort(long comm, int device);

    static native int commGetAsyncError(long comm);

    static native int commCount(long comm);

    static native int commCuDevice(long comm);

    static native int commUserRank(long comm);
}
