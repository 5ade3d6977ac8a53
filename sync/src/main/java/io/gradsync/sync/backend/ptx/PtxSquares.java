package io.gradsync.sync.backend.ptx;

import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.sync.backend.SlicePlan;
import io.gradsync.sync.internal.SquareSlots;

import io.gradsync.sync.backend.ptx.PtxLaunches.Launch;
import io.gradsync.sync.backend.ptx.PtxLaunches.Launcher;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.KernelSpec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The ptx backend's fused sum of squares ({@link PtxSynchronizer#synchronizeSumOfSquares}): for a
 * collecting layout, which GPU sums which gradient and the partials kernels that do it
 * ({@link #prepare}, growing the partials buffers in {@link PtxMemory}); their place at the end of
 * each GPU's all-gather, with the partials' download ({@link #enqueue}); and the per-gradient sums
 * the host adds from what the last call downloaded ({@link #read}).
 *
 * <p>Thread-safety: none; used only under the {@link PtxSynchronizer}'s lock (its calls are serialized).
 */
final class PtxSquares {
    /**
     * The sums of squares of a collecting layout: each gradient is summed whole by one GPU after
     * the all-gather (when every GPU holds the averages), the gradients spread over the GPUs by
     * size. A gradient's sum is then one kernel over exactly its own elements with slot counts from
     * its length alone: the same bits however the gradients were grouped into calls or runs, and
     * whichever GPU summed it. Per GPU: its launches in gradient order and the bytes of partials to
     * download; per gradient: its GPU, first slot and slots.
     */
    record Squares(Launch[][] launches, int[] gpu, long[] firstSlot, int[] slots, long[] bytes) {
    }

    private final List<? extends Device> devices;
    private final Launcher launcher;
    private final PtxMemory memory;

    PtxSquares(List<? extends Device> devices, Launcher launcher, PtxMemory memory) {
        this.devices = devices;
        this.launcher = launcher;
        this.memory = memory;
    }

    /**
     * The partials kernels of a collecting layout, and partials buffers large enough for them;
     * {@code forgetLayouts} runs before a buffer that remembered layouts point into is replaced.
     */
    Squares prepare(List<Replica> replicas, Runnable forgetLayouts) {
        int n = devices.size();
        List<Gradient> gradients = replicas.getFirst().gradients();
        int count = gradients.size();
        int[] gpu = new int[count];
        long[] firstSlot = new long[count];
        int[] slots = new int[count];
        int[] wide = new int[count]; // first-stage slots; 0: one stage
        long[] load = new long[n];
        long[] bytes = new long[n];
        long[] wideBytes = new long[n];
        for (int g = 0; g < count; g++) {
            long elements = gradients.get(g).count();
            int least = 0; // the GPU with the fewest elements so far: a fixed choice for a given list
            for (int j = 1; j < n; j++) {
                least = load[j] < load[least] ? j : least;
            }
            gpu[g] = least;
            load[least] += elements;
            SquareSlots split = SquareSlots.of(elements);
            slots[g] = split.host();
            wide[g] = split.wide();
            firstSlot[g] = bytes[least] / 8;
            bytes[least] += 8L * slots[g];
            wideBytes[least] += 8L * wide[g];
        }
        for (int i = 0; i < n; i++) {
            if (bytes[i] > 0) {
                memory.growPartials(i, bytes[i], forgetLayouts);
            }
            if (wideBytes[i] > 0) {
                memory.growWidePartials(i, wideBytes[i], forgetLayouts);
            }
        }
        List<List<Launch>> perGpu = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            perGpu.add(new ArrayList<>());
        }
        long[] wideSlot = new long[n];
        for (int g = 0; g < count; g++) {
            int j = gpu[g];
            int p = slots[g];
            if (p == 0) {
                continue;
            }
            Gradient grad = replicas.get(j).gradients().get(g);
            DeviceSlice averaged = new DeviceSlice(grad.buffer(), grad.byteOffset(), Math.toIntExact(grad.count()));
            DeviceSlice out = new DeviceSlice(memory.partialsDevice(j), 8 * firstSlot[g], p);
            KernelSpec squares = SlicePlan.sumOfSquaresKernel(grad.dtype());
            if (wide[g] == 0) {
                perGpu.get(j).add(launcher.prepare(j, squares, p, new Object[] {averaged, out}));
            } else {
                DeviceSlice stage = new DeviceSlice(memory.widePartials(j), 8 * wideSlot[j], wide[g]);
                Launch first = launcher.prepare(j, squares, wide[g], new Object[] {averaged, stage});
                Launch second = launcher.prepare(j, SlicePlan.SUM_PARTIALS, p, new Object[] {stage, out});
                perGpu.get(j).add(s -> {
                    first.launch(s);
                    second.launch(s);
                });
                wideSlot[j] += wide[g];
            }
        }
        Launch[][] launches = new Launch[n][];
        for (int i = 0; i < n; i++) {
            launches[i] = perGpu.get(i).toArray(Launch[]::new);
        }
        return new Squares(launches, gpu, firstSlot, slots, bytes);
    }

    /** At the end of GPU j's all-gather (it holds every average now): its sums, then the partials' download. */
    void enqueue(int j, DeviceStream s, Squares squares) {
        if (squares.bytes()[j] > 0) {
            for (Launch sum : squares.launches()[j]) {
                sum.launch(s);
            }
            s.copyToHost(memory.partialsDevice(j), 0, memory.partialsHost(j), 0, squares.bytes()[j]);
        }
    }

    /** Per gradient, from the partials the last call (of {@code squares}' layout) downloaded, added in slot order. */
    double[] read(Squares squares) {
        double[] perGradient = new double[squares.slots().length];
        for (int g = 0; g < perGradient.length; g++) {
            MemorySegment partials = squares.slots()[g] == 0 ? null : memory.partialsHost(squares.gpu()[g]).segment();
            double sum = 0;
            for (int p = 0; p < squares.slots()[g]; p++) {
                sum += partials.getAtIndex(ValueLayout.JAVA_DOUBLE, squares.firstSlot()[g] + p);
            }
            perGradient[g] = sum;
        }
        return perGradient;
    }
}
