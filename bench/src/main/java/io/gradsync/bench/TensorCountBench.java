package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a gradient costs a call beside its bytes: one {@code synchronize} of replicas that each hold
 * a model as {@code tensors} buffers of their own (as a framework's grads are, each wrapped), against
 * the same model in one buffer, interleaved call by call (each form on a synchronizer of its own);
 * medians after warm-up.
 *
 * <p>{@code gradsync run -cp 'lib/*' io.gradsync.bench.TensorCountBench [backend [replicas [elements
 * [tensors,...] [calls]]]]} (defaults: cpu, 2, 9610, 4,300, 20000), on JVM devices, or on the GPUs
 * with {@code -Dgradsync.bench.runtime=cuda}.
 */
public final class TensorCountBench {
    private TensorCountBench() {
    }

    public static void main(String[] args) {
        String backend = args.length > 0 ? args[0] : "cpu";
        int replicas = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long elements = args.length > 2 ? Long.parseLong(args[2]) : 9610;
        String[] counts = (args.length > 3 ? args[3] : "4,300").split(",");
        int calls = args.length > 4 ? Integer.parseInt(args[4]) : 20_000;
        DeviceRuntime runtime = DeviceRuntime.valueOf(System.getProperty("gradsync.bench.runtime", "jvm").toUpperCase(Locale.ROOT));
        List<? extends Device> devices = DeviceCatalog.select(runtime, replicas);
        System.out.printf(Locale.ROOT, "# tensors per call: %s, %d replicas on %s, %,d fp32 elements, %d timed calls each; medians%n",
                backend, replicas, devices.stream().map(Device::id).toList(), elements, calls);
        System.out.printf(Locale.ROOT, "%8s %12s %12s %9s%n", "tensors", "split us", "flat us", "split/flat");
        for (String c : counts) {
            int tensors = Integer.parseInt(c.trim());
            List<DeviceBuffer> buffers = new ArrayList<>();
            // one synchronizer per form: each keeps its own plan, as a training loop's does
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices);
                 GradientSynchronizer flatSync = Synchronizers.create(SyncBackend.parse(backend), devices)) {
                List<Replica> split = new ArrayList<>();
                List<Replica> flat = new ArrayList<>();
                for (Device d : devices) {
                    Replica.Builder b = Replica.on(d);
                    for (int t = 0; t < tensors; t++) {
                        long n = elements * (t + 1) / tensors - elements * t / tensors;
                        DeviceBuffer buf = d.allocate(Math.max(4, n * 4));
                        buffers.add(buf);
                        b.add(new Gradient("t" + t, buf, 0, Math.max(1, n), DType.FP32));
                    }
                    split.add(b.build());
                    DeviceBuffer one = d.allocate(elements * 4);
                    buffers.add(one);
                    flat.add(Replica.on(d).add(new Gradient("flat", one, 0, elements, DType.FP32)).build());
                }
                double[][] micros = new double[2][calls];
                for (int i = -Math.max(2000, calls / 5); i < calls; i++) {
                    for (int form = 0; form < 2; form++) {
                        long t0 = System.nanoTime();
                        if (form == 0) {
                            sync.synchronize(split);
                        } else {
                            flatSync.synchronize(flat);
                        }
                        long t1 = System.nanoTime();
                        if (i >= 0) {
                            micros[form][i] = (t1 - t0) / 1e3;
                        }
                    }
                }
                double s = Timing.of(micros[0]).medianMicros();
                double f = Timing.of(micros[1]).medianMicros();
                System.out.printf(Locale.ROOT, "%8d %12.1f %12.1f %9.2f%n", tensors, s, f, s / f);
            } finally {
                buffers.forEach(DeviceBuffer::close);
            }
        }
    }
}
