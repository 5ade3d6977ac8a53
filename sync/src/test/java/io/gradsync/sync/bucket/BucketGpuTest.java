package io.gradsync.sync.bucket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import io.gradsync.tasks.device.DeviceStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Buckets on real GPUs, for every backend that serves them: exact against per-tensor sync, and as fast as one flat buffer. */
@Tag("gpu")
class BucketGpuTest {
    /** Every device of the runtime, up to 4 (the node the issue names); 2 are enough to run it. */
    private static final int MAX_GPUS = 4;

    /** The backend's devices (OpenCL devices for opencl, CUDA GPUs otherwise) and its synchronizer, or a visible skip. */
    private static GradientSynchronizer create(String backendName, List<? extends Device> devices) {
        try {
            return Synchronizers.create(SyncBackend.parse(backendName), devices);
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            assumeTrue(false, "backend " + backendName + " unavailable: " + e.getMessage());
            throw new AssertionError();
        }
    }

    private static List<? extends Device> devicesFor(String backendName) {
        DeviceRuntime rt = backendName.equals("opencl") ? DeviceRuntime.OPENCL : DeviceRuntime.CUDA;
        var status = DeviceCatalog.status(rt);
        List<? extends Device> gpus = DeviceCatalog.gpus(rt);
        assumeTrue(gpus.size() >= 2, () -> "2 " + rt.label() + " GPUs needed: " + status.describe());
        return gpus.subList(0, Math.min(MAX_GPUS, gpus.size()));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"cpu", "ptx", "opencl", "nccl"})
    void bucketedSyncGivesExactlyThePerTensorResult(String backendName) {
        List<? extends Device> devices = devicesFor(backendName);
        List<BucketSyncTest.Param> params = BucketSyncTest.mixedModel(3, 401, 128L << 20); // a 32 MiB embedding: larger than a bucket
        try (GradientSynchronizer sync = create(backendName, devices);
                GradientBuckets bucketed = BucketSyncTest.buckets(devices, params, GradientBuckets.DEFAULT_BUCKET_BYTES);
                GradientBuckets reference = BucketSyncTest.buckets(devices, params, GradientBuckets.DEFAULT_BUCKET_BYTES);
                BucketSync bs = new BucketSync(bucketed, sync, BucketSync.Options.averageOnly())) {
            BucketSyncTest.fillRandom(bucketed, params, 17);
            BucketSyncTest.fillRandom(reference, params, 17);
            sync.synchronize(reference.parameterReplicas());
            for (int i = params.size() - 1; i >= 0; i--) {
                bs.markReady(params.get(i).name());
            }
            bs.finish();
            for (int r = 0; r < devices.size(); r++) {
                for (BucketSyncTest.Param p : params) {
                    MemorySegment got = BucketSyncTest.read(bucketed.gradient(r, p.name()));
                    MemorySegment want = BucketSyncTest.read(reference.gradient(r, p.name()));
                    assertEquals(-1L, got.mismatch(want), p + " on replica " + r);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"cpu", "ptx", "opencl", "nccl"})
    void bucketsReachNinetyFivePercentOfOneFlatBuffer(String backendName) {
        List<? extends Device> devices = devicesFor(backendName);
        // the model of `gradsync bench --model mixed --model-size 384M --tensors 500`: fp32 tensors of
        // 1 element to 2M and a 25M-element embedding
        List<BucketSyncTest.Param> params = new ArrayList<>();
        for (MixedModel.Parameter p : MixedModel.generate(5, 500, 384L << 20, DType.FP32).parameters()) {
            params.add(new BucketSyncTest.Param(p.name(), p.count(), p.dtype()));
        }
        try (GradientSynchronizer sync = create(backendName, devices);
                GradientBuckets bucketed = BucketSyncTest.buckets(devices, params, GradientBuckets.DEFAULT_BUCKET_BYTES);
                BucketSync bs = new BucketSync(bucketed, sync, BucketSync.Options.averageOnly())) {
            long total = bucketed.buckets().stream().mapToLong(GradientBuckets.Bucket::byteSize).sum();
            List<DeviceBuffer> flat = new ArrayList<>();
            List<Replica> flatReplicas = new ArrayList<>();
            try {
                for (Device d : devices) {
                    DeviceBuffer b = d.allocate(total);
                    flat.add(b);
                    try (DeviceStream s = d.createStream()) {
                        s.fill32(b, 0, total, 0);
                        s.synchronize();
                    }
                    flatReplicas.add(Replica.on(d).add(Gradient.of("flat", b, DType.FP32)).build());
                }
                double flatSeconds = median(() -> sync.synchronize(flatReplicas));
                double bucketSeconds = median(bs::synchronize);
                double ratio = flatSeconds / bucketSeconds;
                System.out.printf(Locale.ROOT, "%s: %d tensors in %d buckets, %.1f MB: flat %.2f ms, buckets %.2f ms, %.1f%%%n",
                        backendName, params.size(), bucketed.buckets().size(), total / 1e6, flatSeconds * 1e3,
                        bucketSeconds * 1e3, 100 * ratio);
                assertTrue(ratio >= 0.95, String.format(Locale.ROOT, "%s: buckets reach %.1f%% of the flat buffer's throughput",
                        backendName, 100 * ratio));
            } finally {
                flat.forEach(DeviceBuffer::close);
            }
        }
    }

    private static double median(Runnable call) {
        for (int i = 0; i < 3; i++) {
            call.run();
        }
        double[] t = new double[11];
        for (int i = 0; i < t.length; i++) {
            long start = System.nanoTime();
            call.run();
            t[i] = (System.nanoTime() - start) / 1e9;
        }
        Arrays.sort(t);
        return t[t.length / 2];
    }
}
