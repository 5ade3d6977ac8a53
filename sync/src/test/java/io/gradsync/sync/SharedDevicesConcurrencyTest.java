package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Devices shared by threads, as the Javadoc promises: two synchronizers on the same devices, each
 * on its own thread, while a third thread keeps opening, using and closing streams on those devices
 * (which the synchronizers' waits for the whole device see come and go). Every result is checked.
 */
class SharedDevicesConcurrencyTest {

    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource({"cpu, jvm", "opencl, opencl", "cpu, opencl"})
    void synchronizersAndStreamsOnSharedDevices(String backend, String runtime) throws Exception {
        List<? extends Device> devices;
        if (runtime.equals("opencl")) {
            assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
            devices = OpenClRuntime.logicalDevices(2);
        } else {
            devices = JvmRuntime.createDevices(2);
        }
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        try {
            for (int s = 0; s < 2; s++) {
                long seed = s;
                threads.add(Thread.ofPlatform().start(() -> {
                    try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices);
                            ReplicaFixture f = ReplicaFixture.flat(devices, 50_001, DType.FP32, seed)) {
                        start.await();
                        for (int i = 0; i < 40; i++) {
                            sync.synchronize(f.replicas);
                        }
                        f.assertAveraged();
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }));
            }
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    while (!stop.get()) {
                        for (Device d : devices) {
                            try (DeviceStream st = d.createStream(); DeviceBuffer b = d.allocate(4096);
                                    HostBuffer h = d.allocateHost(4096)) {
                                st.copyFromHost(h, 0, b, 0, 4096);
                                st.synchronize();
                            }
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
            start.countDown();
            for (int i = 0; i < 2; i++) {
                threads.get(i).join();
            }
            stop.set(true);
            threads.get(2).join();
        } finally {
            stop.set(true);
            devices.forEach(Device::close);
        }
        assertEquals(List.of(), List.copyOf(failures), "failures on shared devices");
    }
}
