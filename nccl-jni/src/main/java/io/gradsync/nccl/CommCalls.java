package io.gradsync.nccl;

/**
 * The native calls a {@link NcclComm} makes, behind an interface so that its state handling
 * and argument checks can be tested without NCCL. Production code has one implementation,
 * {@link #NATIVE}, so the JIT sees a single target.
 */
interface CommCalls {
    void allReduce(long comm, long send, long recv, long count, int type, int op, long stream);

    void broadcast(long comm, long send, long recv, long count, int type, int root, long stream);

    void reduce(long comm, long send, long recv, long count, int type, int op, int root, long stream);

    void reduceScatter(long comm, long send, long recv, long recvCount, int type, int op, long stream);

    void allGather(long comm, long send, long recv, long sendCount, int type, long stream);

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
        public void broadcast(long comm, long send, long recv, long count, int type, int root, long stream) {
            NcclNative.broadcast(comm, send, recv, count, type, root, stream);
        }

        @Override
        public void reduce(long comm, long send, long recv, long count, int type, int op, int root, long stream) {
            NcclNative.reduce(comm, send, recv, count, type, op, root, stream);
        }

        @Override
        public void reduceScatter(long comm, long send, long recv, long recvCount, int type, int op, long stream) {
            NcclNative.reduceScatter(comm, send, recv, recvCount, type, op, stream);
        }

        @Override
        public void allGather(long comm, long send, long recv, long sendCount, int type, long stream) {
            NcclNative.allGather(comm, send, recv, sendCount, type, stream);
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
