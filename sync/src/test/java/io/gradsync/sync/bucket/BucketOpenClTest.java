package io.gradsync.sync.bucket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Buckets on OpenCL devices (PoCL in CI): the norm and clipping pass runs as kernels on the
 * bucket memory there, not on the host, for every dtype.
 */
class BucketOpenClTest {

    @Test
    void normAndClippingRunOnTheDeviceForEveryDtype() {
        var status = DeviceCatalog.status(DeviceRuntime.OPENCL);
        assumeTrue(status.available() && status.deviceCount() > 0, () -> "OpenCL unavailable: " + status.describe());
        int n = Math.min(2, status.deviceCount());
        List<? extends Device> devices = DeviceCatalog.select(DeviceRuntime.OPENCL, n);
        List<BucketSyncTest.Param> params = List.of(new BucketSyncTest.Param("w", 70_001, DType.FP32),
                new BucketSyncTest.Param("h", 3001, DType.BF16), new BucketSyncTest.Param("f", 999, DType.FP16),
                new BucketSyncTest.Param("b", 17, DType.FP32));
        try (GradientSynchronizer sync = Synchronizers.create(n == 1 ? SyncBackend.SINGLE : SyncBackend.OPENCL, devices); // not fused: the second pass
                GradientBuckets b = BucketSyncTest.buckets(devices, params, 64 << 10);
                BucketSync bs = new BucketSync(b, sync, BucketSync.Options.averageOnly().withClipping(2.0))) {
            assertTrue(b.buckets().size() >= 3, "one bucket per dtype at least");
            List<List<MemorySegment>> inputs = BucketSyncTest.fillRandom(b, params, 21);
            double squares = 0;
            double[][] average = new double[params.size()][];
            for (int p = 0; p < params.size(); p++) {
                BucketSyncTest.Param param = params.get(p);
                average[p] = new double[(int) param.count()];
                for (int i = 0; i < param.count(); i++) {
                    double sum = 0;
                    for (List<MemorySegment> replica : inputs) {
                        sum += AverageCheck.get(param.dtype(), replica.get(p), i);
                    }
                    average[p][i] = sum / n;
                    squares += average[p][i] * average[p][i];
                }
            }
            BucketSync.StepResult r = bs.synchronize();
            assertTrue(r.finite());
            assertEquals(Math.sqrt(squares), r.globalNorm(), 2e-3 * r.globalNorm(), "device norm vs float64 of the inputs");
            assertTrue(r.clipScale() < 0.1, "random gradients of 74k elements are far above norm 2: " + r.globalNorm());
            for (int rep = 0; rep < n; rep++) {
                for (int p = 0; p < params.size(); p++) {
                    BucketSyncTest.Param param = params.get(p);
                    MemorySegment got = BucketSyncTest.read(b.gradient(rep, param.name()));
                    double tolerance = param.dtype() == DType.FP32 ? 1e-5 : 1e-2;
                    for (int i = 0; i < param.count(); i++) {
                        double want = average[p][i] * r.clipScale();
                        double v = AverageCheck.get(param.dtype(), got, i);
                        if (Math.abs(v - want) > tolerance * Math.abs(want) + 1e-6) {
                            throw new AssertionError(param + "[" + i + "] on replica " + rep + ": " + v + ", want " + want);
                        }
                    }
                }
            }

            // an infinity is reported and nothing is scaled
            BucketSyncTest.fillRandom(b, params, 22);
            MemorySegment inf = java.lang.foreign.Arena.ofAuto().allocate(2);
            inf.set(ValueLayout.JAVA_SHORT, 0, (short) 0x7C00); // fp16 +Inf
            Gradient f = b.gradient(0, "f");
            BucketSyncTest.write(new Gradient("f", f.buffer(), f.byteOffset() + 2 * 500, 1, DType.FP16), inf);
            BucketSync.StepResult bad = bs.synchronize();
            assertFalse(bad.finite());
            assertEquals(1.0, bad.clipScale());
        } finally {
            devices.forEach(Device::close);
        }
    }
}
