package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A synchronizer's stats count each call's bytes, whichever replica set it gets (a set seen before is counted once). */
class StatsBytesTest {
    @Test
    void everyCallCountsItsOwnReplicasBytes() {
        List<? extends Device> devices = JvmRuntime.createDevices(2);
        List<DeviceBuffer> open = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices)) {
            List<Replica> small = replicas(devices, open, new long[] {10, 3}, DType.FP32); // 52 bytes
            List<Replica> large = replicas(devices, open, new long[] {1000, 7, 100}, DType.BF16); // 2214 bytes
            sync.synchronize(small);
            sync.synchronize(small);
            sync.synchronize(large);
            sync.synchronizeAsync(small).await();
            sync.synchronize(replicas(devices, open, new long[] {10, 3}, DType.FP32)); // equal, not the same list
            assertEquals(4 * 52 + 2214, sync.stats().bytes());
            assertEquals(5, sync.stats().calls());
        } finally {
            open.forEach(DeviceBuffer::close);
        }
    }

    private static List<Replica> replicas(List<? extends Device> devices, List<DeviceBuffer> open, long[] counts, DType dtype) {
        List<Replica> replicas = new ArrayList<>();
        for (Device d : devices) {
            Replica.Builder b = Replica.on(d);
            for (int g = 0; g < counts.length; g++) {
                DeviceBuffer buf = d.allocate(counts[g] * dtype.bytes());
                open.add(buf);
                b.add(new Gradient("g" + g, buf, 0, counts[g], dtype));
            }
            replicas.add(b.build());
        }
        return replicas;
    }
}
