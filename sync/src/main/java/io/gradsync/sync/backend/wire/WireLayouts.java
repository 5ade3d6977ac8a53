package io.gradsync.sync.backend.wire;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.Shards;
import io.gradsync.sync.backend.Collective;
import io.gradsync.sync.backend.Resources;
import io.gradsync.sync.backend.SlicePlan;
import io.gradsync.sync.backend.StreamKernels;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.KernelSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link WireSynchronizer} prepares per gradient layout: each replica's 16-bit scratch (one
 * buffer, a view per fp32 gradient), the replicas the backend is handed (the scratch views in
 * place of the fp32 gradients), and the prepared narrowing and widening launches, all per stage:
 * a large average is cut into stages of consecutive fp32 elements, so that one stage's transfer
 * runs while the next is rounded and the last widened. The last layout is kept, and replanned
 * when the gradients change; scratch grows and is kept.
 *
 * <p>Thread-safety: used under the {@link WireSynchronizer}'s lock only.
 */
final class WireLayouts implements AutoCloseable {
    /** A conversion launch covers at most this many elements (the kernels count in int). */
    private static final long PIECE = 1L << 30;

    /**
     * One stage of a layout: the replicas the backend is handed for it (16-bit scratch views in
     * place of the fp32 gradients' elements it covers) and per replica its launches.
     */
    static final class Stage {
        private final List<Replica> onWire = new ArrayList<>();
        private final List<List<StreamKernels.Launch>> narrow = new ArrayList<>();
        private final List<List<StreamKernels.Launch>> widen = new ArrayList<>();

        /** The replicas the backend averages: 16-bit scratch views in place of the fp32 gradients. */
        List<Replica> onWire() {
            return onWire;
        }

        /** Queues replica r's rounding of this stage's fp32 elements into scratch on {@code stream}. */
        void narrow(int r, DeviceStream stream) {
            for (StreamKernels.Launch l : narrow.get(r)) {
                l.launch(stream);
            }
        }

        /** Queues replica r's widening of this stage's result into its fp32 gradients (a reduce-scatter's shard only). */
        void widen(int r, DeviceStream stream) {
            for (StreamKernels.Launch l : widen.get(r)) {
                l.launch(stream);
            }
        }

        private void close() {
            for (List<List<StreamKernels.Launch>> all : List.of(narrow, widen)) {
                all.forEach(list -> list.forEach(Resources::closeQuietly));
            }
        }
    }

    /**
     * One layout: its stages, in order. One stage where the call is not staged, its replicas on
     * the conversion streams; otherwise each stage's replicas on the backend's streams.
     */
    final class Layout {
        private final List<List<Gradient>> key;
        private final Collective op;
        private final int firstReplica;
        private final List<Stage> stages = new ArrayList<>();

        private Layout(List<List<Gradient>> key, Collective op, int firstReplica) {
            this.key = key;
            this.op = op;
            this.firstReplica = firstReplica;
        }

        List<Stage> stages() {
            return stages;
        }

        private void close() {
            stages.forEach(Stage::close);
        }
    }

    private final List<? extends Device> devices;
    private final DeviceStream[] streams;
    private final DeviceStream[] backendStreams;
    private final DType wire;
    private final long stageBytes;
    private final KernelSpec narrowKernel;
    private final KernelSpec widenKernel;
    private final DeviceBuffer[] scratch;
    private Layout layout;

    /**
     * @param streams        per device, the stream the conversions are prepared for
     * @param backendStreams per device, the stream a staged call's replicas are handed on
     * @param stageBytes     an average whose fp32 gradients take more wire bytes than this is
     *                       handed over in stages of this many (0: never staged)
     */
    WireLayouts(List<? extends Device> devices, DeviceStream[] streams, DeviceStream[] backendStreams, DType wire, long stageBytes) {
        this.devices = devices;
        this.streams = streams;
        this.backendStreams = backendStreams;
        this.wire = wire;
        this.stageBytes = stageBytes;
        this.narrowKernel = SlicePlan.narrowKernel(wire);
        this.widenKernel = SlicePlan.widenKernel(wire);
        this.scratch = new DeviceBuffer[devices.size()];
    }

    /**
     * The layout of {@code replicas} (checked) for {@code op}, this process's first replica being
     * global replica {@code firstReplica} of {@code worldSize}; null where no gradient is fp32.
     */
    Layout of(List<Replica> replicas, Collective op, int firstReplica, int worldSize) {
        List<List<Gradient>> key = replicas.stream().map(Replica::gradients).toList();
        if (layout != null && layout.key.equals(key) && layout.op.equals(op) && layout.firstReplica == firstReplica) {
            return layout;
        }
        if (replicas.getFirst().gradients().stream().noneMatch(g -> g.dtype() == DType.FP32)) {
            return null;
        }
        if (layout != null) {
            layout.close();
            layout = null;
        }
        layout = plan(replicas, key, op, firstReplica, worldSize);
        return layout;
    }

    private Layout plan(List<Replica> replicas, List<List<Gradient>> key, Collective op, int firstReplica, int worldSize) {
        int n = devices.size();
        boolean shardOnly = op.kind() == Collective.Kind.REDUCE_SCATTER;
        long bytes = 0;
        long elements = 0;
        for (Gradient g : replicas.getFirst().gradients()) {
            if (g.dtype() == DType.FP32) {
                bytes += SlicePlan.align(g.count() * wire.bytes());
                elements += g.count();
            }
        }
        List<List<Gradient>> views = new ArrayList<>(); // per replica and gradient, its scratch view (null: not fp32)
        for (int r = 0; r < n; r++) {
            if (scratch[r] == null || scratch[r].byteSize() < bytes) {
                Resources.closeQuietly(scratch[r]);
                scratch[r] = null;
                scratch[r] = devices.get(r).allocate(Math.max(256, bytes));
            }
            List<Gradient> mine = new ArrayList<>();
            long at = 0;
            for (Gradient g : replicas.get(r).gradients()) {
                mine.add(g.dtype() != DType.FP32 ? null : new Gradient(g.name(), scratch[r], at, g.count(), wire));
                at += g.dtype() != DType.FP32 ? 0 : SlicePlan.align(g.count() * wire.bytes());
            }
            views.add(mine);
        }
        // only an average is staged: each stage's average is that part of the whole one, where a
        // reduce-scatter's shards are the whole gradient's
        long perStage = Math.max(1, stageBytes / wire.bytes());
        boolean staged = op.kind() == Collective.Kind.ALL_REDUCE && stageBytes > 0 && elements > perStage;
        int stageCount = staged ? (int) ((elements + perStage - 1) / perStage) : 1;
        Layout l = new Layout(key, op, firstReplica);
        try {
            for (int s = 0; s < stageCount; s++) {
                Stage stage = new Stage();
                l.stages.add(stage);
                long lo = staged ? s * perStage : 0;
                long hi = staged ? Math.min(elements, lo + perStage) : elements;
                for (int r = 0; r < n; r++) {
                    Replica.Builder b = Replica.on(devices.get(r)).stream(staged ? backendStreams[r] : streams[r]);
                    List<StreamKernels.Launch> down = new ArrayList<>();
                    List<StreamKernels.Launch> up = new ArrayList<>();
                    stage.narrow.add(down);
                    stage.widen.add(up);
                    List<Gradient> mine = replicas.get(r).gradients();
                    long at = 0; // the fp32 elements before gradient k, across the call
                    for (int k = 0; k < mine.size(); k++) {
                        Gradient g = mine.get(k);
                        Gradient w = views.get(r).get(k);
                        if (w == null) {
                            if (s == 0) {
                                b.add(g); // other types go to the backend as they are, with the first stage
                            }
                            continue;
                        }
                        long from = Math.max(0, lo - at);
                        long to = Math.min(g.count(), hi - at);
                        at += g.count();
                        if (staged && from >= to) {
                            continue;
                        }
                        b.add(staged ? new Gradient(g.name(), w.buffer(), w.byteOffset() + from * wire.bytes(), to - from, wire) : w);
                        pieces(down, r, g, w, from, to, true);
                        if (shardOnly) { // a reduce-scatter's result is the shard alone; the rest stays as it was
                            Shards own = Shards.range(g.count(), worldSize, firstReplica + r);
                            from = own.offset();
                            to = own.end();
                        }
                        pieces(up, r, g, w, from, to, false);
                    }
                    stage.onWire.add(b.build());
                }
            }
        } catch (RuntimeException e) {
            l.close();
            throw e;
        }
        return l;
    }

    /** Launches converting elements {@code [from, to)} between {@code g} and its wire view {@code w}, in pieces. */
    private void pieces(List<StreamKernels.Launch> out, int r, Gradient g, Gradient w, long from, long to, boolean narrowing) {
        for (long at = from; at < to; at += PIECE) {
            int count = (int) Math.min(PIECE, to - at);
            DeviceSlice fp32 = new DeviceSlice(g.buffer(), g.byteOffset() + at * 4, count);
            DeviceSlice small = new DeviceSlice(w.buffer(), w.byteOffset() + at * wire.bytes(), count);
            out.add(narrowing ? StreamKernels.prepare(streams[r], narrowKernel, count, fp32, small)
                    : StreamKernels.prepare(streams[r], widenKernel, count, small, fp32));
        }
    }

    @Override
    public void close() {
        if (layout != null) {
            layout.close();
            layout = null;
        }
        for (int r = 0; r < scratch.length; r++) {
            Resources.closeQuietly(scratch[r]);
            scratch[r] = null;
        }
    }
}
