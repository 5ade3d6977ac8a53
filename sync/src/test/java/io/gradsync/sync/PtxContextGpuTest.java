package io.gradsync.sync;

import static jcuda.driver.JCudaDriver.cuCtxCreate;
import static jcuda.driver.JCudaDriver.cuCtxDestroy;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.backend.Resources;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code ptx} with another context current on the caller's thread at every call (what a
 * framework's own CUDA calls may leave there; here one of the test's making): each call makes its
 * devices' context current itself. Every round, on the caller's streams, exact.
 */
@Tag("gpu")
class PtxContextGpuTest {
    @ParameterizedTest(name = "{0} replicas, {1} bytes")
    @CsvSource({"2, 4096", "4, 4096", "4, 1048576"})
    void anotherContextCurrentAtEachCallLeavesItRight(int n, long bytes) {
        assumeTrue(!DeviceCatalog.gpus(DeviceRuntime.CUDA).isEmpty(),
                () -> "a CUDA GPU needed: " + DeviceCatalog.status(DeviceRuntime.CUDA).describe());
        List<? extends Device> devices = DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n);
        CUdevice gpu = new CUdevice();
        cuDeviceGet(gpu, 0);
        CUcontext foreign = new CUcontext();
        cuCtxCreate(foreign, 0, gpu);
        List<AutoCloseable> open = new ArrayList<>();
        long count = bytes / 4;
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices)) {
            List<Replica> replicas = new ArrayList<>();
            List<DeviceStream> callers = new ArrayList<>();
            List<DeviceBuffer> grads = new ArrayList<>();
            List<HostBuffer> host = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                Device d = devices.get(r);
                DeviceStream caller = track(open, d.createStream());
                DeviceBuffer grad = track(open, d.allocate(bytes));
                callers.add(caller);
                grads.add(grad);
                host.add(track(open, d.allocateHost(bytes)));
                replicas.add(Replica.on(d).add("w", grad, DType.FP32).stream(caller).build());
            }
            for (int round = 0; round < 20; round++) {
                for (int r = 0; r < n; r++) {
                    callers.get(r).fill32(grads.get(r), 0, bytes, Float.floatToRawIntBits(2 * r + round));
                }
                cuCtxSetCurrent(foreign); // what a framework's own CUDA calls might leave current
                SyncHandle h = round % 2 == 0 ? sync.synchronizeAsync(replicas) : null;
                if (h == null) {
                    sync.synchronize(replicas);
                }
                cuCtxSetCurrent(foreign);
                for (int r = 0; r < n; r++) {
                    callers.get(r).copyToHost(grads.get(r), 0, host.get(r), 0, bytes);
                }
                if (h != null) {
                    h.await();
                }
                for (int r = 0; r < n; r++) {
                    callers.get(r).synchronize();
                    float expected = (n - 1) + round; // the mean of 2r + round over r
                    for (long i = 0; i < count; i += 97) {
                        assertEquals(expected, host.get(r).segment().getAtIndex(ValueLayout.JAVA_FLOAT, i),
                                "round " + round + ", replica " + r + ", element " + i);
                    }
                }
            }
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                Resources.closeQuietly(open.get(i));
            }
            cuCtxDestroy(foreign);
        }
    }

    private static <T extends AutoCloseable> T track(List<AutoCloseable> open, T resource) {
        open.add(resource);
        return resource;
    }
}
