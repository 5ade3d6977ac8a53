package io.gradsync.nccl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Records the calls a {@link NcclComm} makes, so its checks and state can be tested without NCCL. */
class RecordingCommCalls implements CommCalls {
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    volatile int asyncError;

    @Override
    public void allReduce(long comm, long send, long recv, long count, int type, int op, long stream) {
        calls.add("allReduce " + send + " " + recv + " " + count + " " + type + " " + op + " " + stream);
    }

    @Override
    public void broadcast(long comm, long send, long recv, long count, int type, int root, long stream) {
        calls.add("broadcast " + send + " " + recv + " " + count + " " + type + " root " + root + " " + stream);
    }

    @Override
    public void reduce(long comm, long send, long recv, long count, int type, int op, int root, long stream) {
        calls.add("reduce " + send + " " + recv + " " + count + " " + type + " " + op + " root " + root + " " + stream);
    }

    @Override
    public void reduceScatter(long comm, long send, long recv, long recvCount, int type, int op, long stream) {
        calls.add("reduceScatter " + send + " " + recv + " " + recvCount + " " + type + " " + op + " " + stream);
    }

    @Override
    public void allGather(long comm, long send, long recv, long sendCount, int type, long stream) {
        calls.add("allGather " + send + " " + recv + " " + sendCount + " " + type + " " + stream);
    }

    @Override
    public int count(long comm) {
        calls.add("count");
        return 4;
    }

    @Override
    public int cuDevice(long comm) {
        calls.add("cuDevice");
        return 2;
    }

    @Override
    public int userRank(long comm) {
        calls.add("userRank");
        return 1;
    }

    @Override
    public int asyncError(long comm) {
        calls.add("asyncError");
        return asyncError;
    }

    @Override
    public String lastError(long comm) {
        calls.add("lastError");
        return "peer 3 went away";
    }

    @Override
    public void finalizeComm(long comm) {
        calls.add("finalize");
    }

    @Override
    public void destroy(long comm, int boundDevice) {
        calls.add("destroy " + boundDevice);
    }

    @Override
    public void abort(long comm, int boundDevice) {
        calls.add("abort " + boundDevice);
    }
}
