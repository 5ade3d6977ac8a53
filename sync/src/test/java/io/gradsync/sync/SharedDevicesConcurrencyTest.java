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

    /** Two devices of {@code runtime} ({@code opencl}: logical ones of PoCL's; else JVM devices), or the test skipped. */
    private static List<? extends Device> twoDevices(String runtime) {
        if (runtime.equals("opencl")) {
            assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
            return OpenClRuntime.logicalDevices(2);
        }
        return JvmRuntime.createDevices(2);
    }

    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource({"cpu, jvm", "opencl, opencl", "cpu, opencl"})
    void synchronizersAndStreamsOnSharedDevices(String backend, String runtime) throws Exception {
        List<? extends Device> devices = twoDevices(runtime);
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

    /**
     * One synchronizer shared by threads, as its Javadoc allows, with asynchronous calls: two
     * threads each calling and awaiting, and a handle awaited on another thread than the one that
     * made the call. The calls reuse the synchronizer's events; OpenCL once released the event
     * a waiting thread held, and PoCL aborted the JVM. The average of averaged replicas is the same
     * bits, so the result is checked once at the end.
     */
    @ParameterizedTest(name = "{0} on {1}, wire {2}")
    @CsvSource({"opencl, opencl, fp32", "cpu, opencl, fp16", "opencl, opencl, bf16", "cpu, jvm, fp32"})
    void oneSynchronizerSharedByThreadsWithAsynchronousCalls(String backend, String runtime, String wire) throws Exception {
        List<? extends Device> devices = twoDevices(runtime);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        SyncOptions options = wire.equals("fp32") ? SyncOptions.defaults() : SyncOptions.defaults().withWire(DType.parse(wire));
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices, options);
                ReplicaFixture f = ReplicaFixture.flat(devices, 4_001, DType.FP32, 7)) {
            java.util.concurrent.BlockingQueue<SyncHandle> handles = new java.util.concurrent.LinkedBlockingQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        for (int i = 0; i < 150; i++) {
                            sync.synchronizeAsync(f.replicas).await();
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            threads.add(Thread.ofPlatform().start(() -> { // calls here, awaited by the next thread
                try {
                    for (int i = 0; i < 150; i++) {
                        handles.put(sync.synchronizeAsync(f.replicas));
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < 150; i++) {
                        handles.take().await();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(List.of(), List.copyOf(failures), "failures of calls shared by threads");
            if (wire.equals("fp32")) {
                f.assertAveraged();
            }
        } finally {
            devices.forEach(Device::close);
        }
    }
}
