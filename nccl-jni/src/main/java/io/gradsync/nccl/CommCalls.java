package io.gradsync.nccl;

/**
 * The native calls a {@link NcclComm} makes, behind an interface so that its state handling
 * and argument checks can be tested without NCCL. Production code has one implementation,
 * {@link #NATIVE}, so the JIT sees a single target.
 */
interface CommCalls {
    void allReduce(long comm, long send, long recv, long count, int type, int op, long stream);

    int count(long comm);

    int cuDevice(long comm);

    int userRank(long comm);

    int asyncError(long comm);

    String lastError(long comm);

    void finalizeComm(long comm);

    void destroy(long comm, int boundDevice);

    void abort(long comm, int boundDevice);

    CommCalls NATIVE = new CommCalls() {
        @Override
        public void allReduce(long comm, long send, long recv, long count, int type, int op, long stream) {
            NcclNative.allReduce(comm, send, recv, count, type, op, stream);
        }

        @Override
        public int count(long comm) {
            return NcclNative.commCount(comm);
        }

        @Override
        public int cuDevice(long comm) {
            return NcclNative.commCuDevice(comm);
        }

        @Override
        public int userRank(long comm) {
            return NcclNative.commUserRank(comm);
        }

        @Override
        public int asyncError(long comm) {
            return NcclNative.commGetAsyncError(comm);
        }

        @Override
        public String lastError(long comm) {
            return NcclNative.lastError(comm);
        }

        @Override
        public void finalizeComm(long comm) {
            NcclNative.commFinalize(comm);
        }

        @Override
        public void destroy(long comm, int boundDevice) {
            NcclNative.commDestroy(comm, boundDevice);
        }

        @Override
        public void abort(long comm, int boundDevice) {
            NcclNative.commAbort(comm, boundDevice);
        }
    };
}
