package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.SlicePlan;
import static io.gradsync.sync.backend.Resources.closeQuietly;

import io.gradsync.sync.backend.ptx.PtxLaunches.Launch;
import io.gradsync.sync.backend.ptx.PtxLayouts.Layout;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import java.util.List;

/**
 * The ptx backend's transport: one stream per GPU (plus its extra all-gather lanes), the events
 * between GPUs, and the schedule a call of a prepared {@link Layout} enqueues on them: host staging
 * for pairs without P2P (phase 0, {@code staged}), or on a 16-bit wire each GPU's sends into its
 * peers' wire buffers (phase 0, {@code sent}), each GPU's reduce (phase 1, {@code reduced}),
 * each GPU's all-gather after every GPU's reduce (phase 2, its lanes forked from its stream and
 * joined back), and the fused sums of squares at its end; as one recordable piece that forks from
 * stream 0 and joins back into it ({@link #enqueueForked}). Every event of a phase is recorded, on
 * all GPUs, before any stream waits on it.
 *
 * <p>Thread-safety: none; used only under the {@link PtxSynchronizer}'s lock (its calls are
 * serialized). The streams themselves run the enqueued work asynchronously, as ordered here.
 */
final class PtxSchedule {
    private final List<? extends Device> devices;
    private final PtxPeers peers;
    private final PtxMemory memory;
    private final PtxSquares squares;
    private final int laneCount;
    private final DeviceStream[] streams;
    private final DeviceEvent[] staged;
    private final DeviceEvent[] sent;
    private final DeviceEvent[] reduced;
    /** Recorded schedules only: stream 0's start, which the others wait for, and each stream's end, which stream 0 waits for. */
    private DeviceEvent forked;
    private final DeviceEvent[] joined;
    /** Recorded on stream 0 at the end of every call. */
    private DeviceEvent done;
    /** Per GPU: the streams its all-gather pulls on, the GPU's own stream first ({@link PtxOptions#gatherLanes()}). */
    private final DeviceStream[][] gatherLanes;
    private final DeviceEvent[] gatherForked;
    private final DeviceEvent[][] gatherJoined;

    /** Makes no stream or event yet ({@link #open}). */
    PtxSchedule(List<? extends Device> devices, PtxOptions options, PtxPeers peers, PtxMemory memory, PtxSquares squares) {
        this.devices = devices;
        this.peers = peers;
        this.memory = memory;
        this.squares = squares;
        int n = devices.size();
        streams = new DeviceStream[n];
        staged = new DeviceEvent[n];
        sent = new DeviceEvent[n];
        reduced = new DeviceEvent[n];
        joined = new DeviceEvent[n];
        laneCount = Math.max(1, Math.min(options.gatherLanes(), n - 1));
        gatherLanes = new DeviceStream[n][laneCount];
        gatherForked = new DeviceEvent[n];
        gatherJoined = new DeviceEvent[n][laneCount];
    }

    /** Makes the streams and events; on a failure, what was made is for {@link #closeStreams} and {@link #closeLanesAndEvents}. */
    void open() {
        for (int i = 0; i < devices.size(); i++) {
            streams[i] = devices.get(i).createStream();
            staged[i] = devices.get(i).createUntimedEvent();
            sent[i] = devices.get(i).createUntimedEvent();
            reduced[i] = devices.get(i).createUntimedEvent();
            joined[i] = devices.get(i).createUntimedEvent();
            gatherLanes[i][0] = streams[i];
            for (int l = 1; l < laneCount; l++) {
                gatherLanes[i][l] = devices.get(i).createStream();
                gatherJoined[i][l] = devices.get(i).createUntimedEvent();
            }
            if (laneCount > 1) {
                gatherForked[i] = devices.get(i).createUntimedEvent();
            }
        }
        forked = devices.getFirst().createUntimedEvent();
        done = devices.getFirst().createUntimedEvent();
    }

    /** Stream 0: every call starts on it, every other stream forks from it and joins back. */
    DeviceStream origin() {
        return streams[0];
    }

    /** Marks the end of the call on stream 0 (which joined every other stream's end) and returns that event. */
    DeviceEvent recordDone() {
        streams[0].record(done);
        return done;
    }

    /**
     * The schedule as one recordable piece: every stream forks from stream 0 and joins back into
     * it; or, where GPU 0 averages every run alone, its launches on stream 0 and nothing else.
     */
    void enqueueForked(Layout layout) {
        if (layout.oneGpu) {
            for (Launch whole : layout.launches[0]) {
                if (whole != null) { // null: an empty run
                    whole.launch(streams[0]);
                }
            }
            return;
        }
        streams[0].record(forked);
        for (int i = 1; i < streams.length; i++) {
            streams[i].waitFor(forked);
        }
        enqueue(layout);
        for (int i = 1; i < streams.length; i++) {
            streams[i].record(joined[i]);
            streams[0].waitFor(joined[i]);
        }
    }

    private void enqueue(Layout layout) {
        List<SlicePlan.Run> runs = layout.plan.runs();
        Collective op = layout.op;
        int n = devices.size();
        if (!peers.all() && op.sums()) {
            stageForPeersWithoutP2p(runs);
        }
        if (layout.anyWired()) {
            send(layout);
        }
        for (int k = 0; k < n; k++) {
            int i = op.root() < 0 ? k : (op.root() + k) % n; // the root's record first: the others wait for it
            switch (op.kind()) {
                case ALL_REDUCE, REDUCE_SCATTER -> reduce(i, layout);
                case ALL_GATHER -> publish(i, runs);
                case BROADCAST -> scatter(i, runs, op.root());
            }
        }
        boolean gathers = op.kind() != Collective.Kind.REDUCE_SCATTER && (layout.squares != null || !allOneShot(layout));
        for (int j = 0; j < n && gathers; j++) {
            if (j != op.root()) {
                gather(j, layout);
            }
        }
    }

    /** Every run averaged one-shot: each GPU wrote its slices into every replica in phase 1, and nothing waits across GPUs. */
    private static boolean allOneShot(Layout layout) {
        for (boolean oneShot : layout.oneShot) {
            if (!oneShot) {
                return false;
            }
        }
        return true;
    }

    /** All-gather's phase 1 on GPU i: where some GPU cannot read it directly, its own slices go to {@code result}. */
    private void publish(int i, List<SlicePlan.Run> runs) {
        DeviceStream s = streams[i];
        if (peers.lacksPeer(i)) {
            for (SlicePlan.Run run : runs) {
                long bytes = run.sliceCount(i) * run.dtype().bytes();
                if (bytes > 0) {
                    s.copyToHost(run.buffers()[i], run.sliceOffset(i, i), memory.result(), run.packedSliceOffset(i), bytes);
                }
            }
        }
        s.record(reduced[i]);
    }

    /**
     * Broadcast's phase 1: GPU i (not the root) pulls slice i of every run from the root, directly
     * or from {@code result}, which the root fills whole where some pair has no P2P.
     */
    private void scatter(int i, List<SlicePlan.Run> runs, int root) {
        DeviceStream s = streams[i];
        if (i == root) {
            if (!peers.all()) {
                for (SlicePlan.Run run : runs) {
                    s.copyToHost(run.buffers()[root], run.offsets()[root], memory.result(), run.packed(), run.bytes());
                }
            }
            s.record(reduced[i]);
            return;
        }
        if (!peers.direct(i, root)) {
            s.waitFor(reduced[root]);
        }
        for (SlicePlan.Run run : runs) {
            long bytes = run.sliceCount(i) * run.dtype().bytes();
            if (bytes == 0) {
                continue;
            }
            if (peers.direct(i, root)) {
                s.copy(run.buffers()[root], run.sliceOffset(root, i), run.buffers()[i], run.sliceOffset(i, i), bytes);
            } else {
                s.copyFromHost(memory.result(), run.packedSliceOffset(i), run.buffers()[i], run.sliceOffset(i, i), bytes);
            }
        }
        s.record(reduced[i]);
    }

    /** Phase 0 on a 16-bit wire: GPU j rounds slice i of its replica into GPU i's wire buffer, for every GPU i. */
    private void send(Layout layout) {
        int n = devices.size();
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < layout.sends[j].length; k++) {
                for (int step = 1; step <= n; step++) { // its own slot last: the peers' first, as the links are the long part
                    int i = (j + step) % n;
                    if (layout.sends[j][k][i] != null) {
                        layout.sends[j][k][i].launch(streams[j]);
                    }
                }
            }
            streams[j].record(sent[j]);
        }
    }

    /** Phase 0: GPU j puts slice i of its replica in host memory for every GPU i it has no P2P with. */
    private void stageForPeersWithoutP2p(List<SlicePlan.Run> runs) {
        int n = devices.size();
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < runs.size(); k++) {
                SlicePlan.Run run = runs.get(k);
                for (int i = 0; i < n; i++) {
                    long bytes = run.sliceCount(i) * run.dtype().bytes();
                    if (!peers.direct(i, j) && bytes > 0) {
                        streams[j].copyToHost(run.buffers()[j], run.sliceOffset(j, i), memory.host(j), run.packedSliceOffset(i), bytes);
                    }
                }
            }
            streams[j].record(staged[j]);
        }
    }

    /**
     * Phase 1 on GPU i: slice i of every run averaged in place: of one-shot runs into every replica,
     * of the others into replica i (published to {@code result} for an average only).
     */
    private void reduce(int i, Layout layout) {
        List<SlicePlan.Run> runs = layout.plan.runs();
        int n = devices.size();
        DeviceStream s = streams[i];
        for (int j = 0; j < n; j++) {
            if (!peers.direct(i, j)) {
                s.waitFor(staged[j]);
            } else if (j != i && layout.anyWired()) {
                s.waitFor(sent[j]);
            }
        }
        for (int k = 0; k < runs.size(); k++) {
            SlicePlan.Run run = runs.get(k);
            if (layout.wired[k]) {
                if (layout.launches[i][k] != null) { // null: an empty slice
                    layout.launches[i][k].launch(s);
                    if (layout.op.kind() == Collective.Kind.REDUCE_SCATTER) {
                        layout.widenOwn[i][k].launch(s); // an average widens its own slice in its gather: peers need not wait for it
                    }
                }
                continue;
            }
            if (layout.oneShot[k]) {
                if (layout.launches[i][k] != null) { // null: an empty slice
                    layout.launches[i][k].launch(s);
                }
                continue;
            }
            long bytes = run.sliceCount(i) * run.dtype().bytes();
            if (bytes == 0) {
                continue;
            }
            long at = layout.scratchAt[i][k];
            for (int j = 0; j < n; j++) {
                if (!peers.direct(i, j)) {
                    s.copyFromHost(memory.host(j), run.packedSliceOffset(i), memory.scratch(i), at, bytes);
                    at += SlicePlan.align(bytes);
                }
            }
            layout.launches[i][k].launch(s);
            if (peers.lacksPeer(i) && layout.op.kind() == Collective.Kind.ALL_REDUCE) {
                s.copyToHost(run.buffers()[i], run.sliceOffset(i, i), memory.result(), run.packedSliceOffset(i), bytes);
            }
        }
        s.record(reduced[i]);
    }

    /** Phase 2 on GPU j, after every GPU's phase 1: pull the slices of the runs not averaged one-shot. */
    private void gather(int j, Layout layout) {
        List<SlicePlan.Run> runs = layout.plan.runs();
        int n = devices.size();
        DeviceStream s = streams[j];
        for (int k = 0; k < runs.size(); k++) { // its own 16-bit averages, while the peers may still be averaging theirs
            if (layout.wired[k] && layout.widenOwn[j][k] != null) {
                layout.widenOwn[j][k].launch(s);
            }
        }
        for (int i = 0; i < n; i++) {
            if (i != j) {
                s.waitFor(reduced[i]);
            }
        }
        DeviceStream[] lanes = gatherLanes[j];
        if (lanes.length > 1) { // the extra lanes start where stream j is now: after every reduce
            s.record(gatherForked[j]);
            for (int l = 1; l < lanes.length; l++) {
                lanes[l].waitFor(gatherForked[j]);
            }
        }
        for (int k = 0; k < runs.size(); k++) {
            SlicePlan.Run run = runs.get(k);
            if (layout.oneShot[k]) {
                continue; // every GPU wrote its slice's average into replica j in phase 1
            }
            for (int i = 0; i < n; i++) {
                long bytes = run.sliceCount(i) * run.dtype().bytes();
                if (i == j || bytes == 0) {
                    continue;
                }
                // slices from different peers on different lanes: their copies can run at once
                DeviceStream lane = lanes[((i - j + n) % n - 1) % lanes.length];
                Launch pull = layout.gathers == null ? null : layout.gathers[j][k][i];
                if (pull != null) {
                    pull.launch(lane);
                } else if (peers.direct(i, j)) {
                    lane.copy(run.buffers()[i], run.sliceOffset(i, i), run.buffers()[j], run.sliceOffset(j, i), bytes);
                } else {
                    lane.copyFromHost(memory.result(), run.packedSliceOffset(i), run.buffers()[j], run.sliceOffset(j, i), bytes);
                }
            }
        }
        for (int l = 1; l < lanes.length; l++) { // stream j ends after all of its lanes
            lanes[l].record(gatherJoined[j][l]);
            s.waitFor(gatherJoined[j][l]);
        }
        if (layout.squares != null) { // GPU j holds every average now
            squares.enqueue(j, s, layout.squares);
        }
    }

    /**
     * Waits for and closes each GPU's own stream (the first release step: nothing may still run when
     * memory and schedules go); returns the first failure of a wait, or null.
     */
    RuntimeException closeStreams() {
        RuntimeException failure = null;
        for (DeviceStream s : streams) {
            if (s != null) {
                try {
                    s.synchronize();
                } catch (RuntimeException e) {
                    failure = failure == null ? e : failure;
                }
                closeQuietly(s);
            }
        }
        return failure;
    }

    /** Closes the extra all-gather lanes and every event; after {@link #closeStreams}. */
    void closeLanesAndEvents() {
        for (DeviceStream[] lanes : gatherLanes) {
            for (int l = 1; l < lanes.length; l++) {
                closeQuietly(lanes[l]);
            }
        }
        for (DeviceEvent[] joinedLanes : gatherJoined) {
            for (DeviceEvent e : joinedLanes) {
                closeQuietly(e);
            }
        }
        for (DeviceEvent[] events : new DeviceEvent[][] {staged, sent, reduced, joined, gatherForked, {forked, done}}) {
            for (DeviceEvent e : events) {
                closeQuietly(e);
            }
        }
    }
}
