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
 * place of the fp32 gradients, on the wire synchronizer's streams), and the prepared narrowing and
 * widening launches. The last layout is kept, and replanned when the gradients change; scratch
 * grows and is kept.
 *
 * <p>Thread-safety: used under the {@link WireSynchronizer}'s lock only.
 */
final class WireLayouts implements AutoCloseable {
    /** A conversion launch covers at most this many elements (the kernels count in int). */
    private static final long PIECE = 1L << 30;

    /** One layout: per replica its launches, and the replicas on the wire. */
    final class Layout {
        private final List<List<Gradient>> key;
        private final Collective op;
        private final int firstReplica;
        private final List<Replica> onWire;
        private final List<List<StreamKernels.Launch>> narrow = new ArrayList<>();
        private final List<List<StreamKernels.Launch>> widen = new ArrayList<>();

        private Layout(List<List<Gradient>> key, Collective op, int firstReplica, List<Replica> onWire) {
            this.key = key;
            this.op = op;
            this.firstReplica = firstReplica;
            this.onWire = onWire;
        }

        /** The replicas the backend averages: 16-bit scratch views in place of the fp32 gradients. */
        List<Replica> onWire() {
            return onWire;
        }

        /** Queues replica r's rounding of its fp32 gradients into scratch on its stream. */
        void narrow(int r) {
            for (StreamKernels.Launch l : narrow.get(r)) {
                l.launch(streams[r]);
            }
        }

        /** Queues replica r's widening of the result into its fp32 gradients (a reduce-scatter's shard only). */
        void widen(int r) {
            for (StreamKernels.Launch l : widen.get(r)) {
                l.launch(streams[r]);
            }
        }

        private void close() {
            for (List<List<StreamKernels.Launch>> all : List.of(narrow, widen)) {
                all.forEach(list -> list.forEach(Resources::closeQuietly));
            }
        }
    }

    private final List<? extends Device> devices;
    private final DeviceStream[] streams;
    private final DType wire;
    private final KernelSpec narrowKernel;
    private final KernelSpec widenKernel;
    private final DeviceBuffer[] scratch;
    private Layout layout;

    WireLayouts(List<? extends Device> devices, DeviceStream[] streams, DType wire) {
        this.devices = devices;
        this.streams = streams;
        this.wire = wire;
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
        for (Gradient g : replicas.getFirst().gradients()) {
            if (g.dtype() == DType.FP32) {
                bytes += SlicePlan.align(g.count() * wire.bytes());
            }
        }
        List<Replica> onWire = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            if (scratch[r] == null || scratch[r].byteSize() < bytes) {
                Resources.closeQuietly(scratch[r]);
                scratch[r] = null;
                scratch[r] = devices.get(r).allocate(Math.max(256, bytes));
            }
            Replica.Builder b = Replica.on(devices.get(r)).stream(streams[r]);
            long at = 0;
            for (Gradient g : replicas.get(r).gradients()) {
                if (g.dtype() != DType.FP32) {
                    b.add(g);
                    continue;
                }
                b.add(new Gradient(g.name(), scratch[r], at, g.count(), wire));
                at += SlicePlan.align(g.count() * wire.bytes());
            }
            onWire.add(b.build());
        }
        Layout l = new Layout(key, op, firstReplica, List.copyOf(onWire));
        try {
            for (int r = 0; r < n; r++) {
                List<StreamKernels.Launch> down = new ArrayList<>();
                List<StreamKernels.Launch> up = new ArrayList<>();
                List<Gradient> mine = replicas.get(r).gradients();
                List<Gradient> wired = onWire.get(r).gradients();
                for (int k = 0; k < mine.size(); k++) {
                    Gradient g = mine.get(k);
                    if (g.dtype() != DType.FP32 || g.count() == 0) {
                        continue;
                    }
                    Gradient w = wired.get(k);
                    pieces(down, r, g, w, 0, g.count(), true);
                    long from = 0;
                    long to = g.count();
                    if (shardOnly) { // a reduce-scatter's result is the shard alone; the rest stays as it was
                        Shards own = Shards.range(g.count(), worldSize, firstReplica + r);
                        from = own.offset();
                        to = own.end();
                    }
                    pieces(up, r, g, w, from, to, false);
                }
                l.narrow.add(down);
                l.widen.add(up);
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
