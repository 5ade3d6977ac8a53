package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.bucket.BucketSync;
import io.gradsync.sync.bucket.GradientBuckets;
import io.gradsync.sync.bucket.MixedModel;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import java.util.Locale;

/**
 * Median time of one flat {@code synchronize} and of one bucket step (markReady in backward order,
 * then finish) for the mixed model, per backend, on N replicas (sharing GPUs where fewer): for
 * comparing two builds in one run, as {@link SyncTimer} does for flat buffers. It calls only what
 * builds before the collectives had, so the other build's jars can be put first on the class path.
 *
 * <p>{@code gradsync run -cp 'lib/*' io.gradsync.bench.BucketTimer BACKENDS MODEL_SIZE N [ITERS]}, e.g.
 * {@code ptx,cpu 256M 2 20}.
 */
public final class BucketTimer {
    private BucketTimer() {
    }

    public static void main(String[] args) {
        List<String> backends = List.of(args[0].split(","));
        long bytes = Sizes.parse(args[1]);
        int n = Integer.parseInt(args[2]);
        int iters = args.length > 3 ? Integer.parseInt(args[3]) : 20;
        List<? extends Device> gpus = DeviceCatalog.gpus(DeviceRuntime.CUDA);
        List<? extends Device> devices = gpus.isEmpty() ? JvmRuntime.createDevices(n)
                : gpus.size() >= n ? gpus.subList(0, n) : DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n);
        MixedModel model = MixedModel.generate(1, MixedModel.DEFAULT_TENSORS, bytes, DType.FP32);
        System.out.printf(Locale.ROOT, "# bucket timer: %s, %s, %d timed calls each, medians in us%n", devices.stream().map(Device::id).toList(),
                model, iters);
        for (String backend : backends) {
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices);
                 GradientBuckets buckets = model.buckets(devices, GradientBuckets.DEFAULT_BUCKET_BYTES);
                 BucketSync step = new BucketSync(buckets, sync, BucketSync.Options.averageOnly())) {
                List<DeviceBuffer> flat = new java.util.ArrayList<>();
                List<Replica> flatReplicas = new java.util.ArrayList<>();
                for (Device d : devices) {
                    DeviceBuffer b = d.allocate(model.totalBytes());
                    flat.add(b);
                    flatReplicas.add(Replica.on(d).add("model", b, DType.FP32).build());
                }
                Runnable flatCall = () -> sync.synchronize(flatReplicas);
                Runnable stepCall = () -> {
                    for (MixedModel.Parameter p : model.backwardOrder()) {
                        step.markReady(p.name());
                    }
                    step.finish();
                };
                long until = System.nanoTime() + 500_000_000L;
                for (int w = 0; w < 3 || System.nanoTime() < until; w++) {
                    flatCall.run();
                    stepCall.run();
                }
                double[][] us = new double[2][iters];
                for (int i = 0; i < iters; i++) {
                    long t0 = System.nanoTime();
                    flatCall.run();
                    long t1 = System.nanoTime();
                    stepCall.run();
                    us[0][i] = (t1 - t0) / 1e3;
                    us[1][i] = (System.nanoTime() - t1) / 1e3;
                }
                double f = Timing.of(us[0]).medianMicros();
                double s = Timing.of(us[1]).medianMicros();
                System.out.printf(Locale.ROOT, "%-6s flat %10.1f  bucket step %10.1f  step/flat %.3f%n", backend, f, s, s / f);
                flat.forEach(DeviceBuffer::close);
            } catch (UnsupportedOperationException e) {
                System.out.println(backend + ": skipped: " + Messages.firstLine(e));
            }
        }
    }
}
