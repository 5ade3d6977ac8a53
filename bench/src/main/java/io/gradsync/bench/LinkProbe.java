package io.gradsync.bench;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Measures the links a sync backend moves data over: pinned host memory to and from each device,
 * all devices at once (what host staging is bound by), and GPU to GPU (CUDA only). Each figure is the
 * median of several timed copies of {@code bytes}, timed on the host around the copies of all
 * devices together so that concurrent copies are measured as the aggregate they are.
 */
public final class LinkProbe {

    /** One measured link: {@code name}, bytes moved per repetition over all devices, GB/s. */
    public record Link(String name, long bytes, double gbPerSecond) {
    }

    private LinkProbe() {
    }

    public static List<Link> measure(List<? extends Device> devices, long bytes, int repeats) {
        List<Link> links = new ArrayList<>();
        int n = devices.size();
        List<DeviceBuffer> buffers = new ArrayList<>();
        List<DeviceBuffer> second = new ArrayList<>();
        List<HostBuffer> hosts = new ArrayList<>();
        List<DeviceStream> streams = new ArrayList<>();
        try {
            for (Device d : devices) {
                buffers.add(d.allocate(bytes));
                second.add(d.allocate(bytes));
                hosts.add(d.allocateHost(bytes));
                streams.add(d.createStream());
                streams.getLast().fill32(buffers.getLast(), 0, bytes & ~3L, 0x3F800000);
            }
            links.add(new Link("H2D " + devices.getFirst().id(), bytes,
                    time(bytes, repeats, List.of(streams.getFirst()), s -> s.copyFromHost(hosts.getFirst(), 0, buffers.getFirst(), 0, bytes))));
            links.add(new Link("D2H " + devices.getFirst().id(), bytes,
                    time(bytes, repeats, List.of(streams.getFirst()), s -> s.copyToHost(buffers.getFirst(), 0, hosts.getFirst(), 0, bytes))));
            if (n > 1) {
                links.add(new Link("H2D all " + n, bytes * n, time(bytes * n, repeats, streams, s -> {
                    int i = streams.indexOf(s);
                    s.copyFromHost(hosts.get(i), 0, buffers.get(i), 0, bytes);
                })));
                links.add(new Link("D2H all " + n, bytes * n, time(bytes * n, repeats, streams, s -> {
                    int i = streams.indexOf(s);
                    s.copyToHost(buffers.get(i), 0, hosts.get(i), 0, bytes);
                })));
            }
            // Only CUDA has a device-to-device link to measure: an OpenCL buffer belongs to the
            // context, not a device (NVIDIA's OpenCL timed a copy "between" two GPUs at half the
            // device-copy rate, 1747 GB/s, i.e. within one GPU), and the opencl backend stages through host memory
            if (n > 1 && devices.get(0).runtime() == DeviceRuntime.CUDA) {
                links.add(new Link("peer " + devices.get(0).id() + "->" + devices.get(1).id(), bytes,
                        time(bytes, repeats, List.of(streams.get(1)), s -> s.copy(buffers.get(0), 0, buffers.get(1), 0, bytes))));
            }
            links.add(new Link("D2D " + devices.getFirst().id() + " (read+write)", 2 * bytes,
                    time(2 * bytes, repeats, List.of(streams.getFirst()), s -> s.copy(buffers.getFirst(), 0, second.getFirst(), 0, bytes))));
            return links;
        } finally {
            streams.forEach(DeviceStream::close);
            buffers.forEach(DeviceBuffer::close);
            second.forEach(DeviceBuffer::close);
            hosts.forEach(HostBuffer::close);
        }
    }

    private interface Copy {
        void on(DeviceStream stream);
    }

    private static double time(long bytes, int repeats, List<DeviceStream> streams, Copy copy) {
        double[] seconds = new double[repeats];
        for (int i = -1; i < repeats; i++) { // one warm-up round
            List<DeviceEvent> done = new ArrayList<>();
            long t0 = System.nanoTime();
            for (DeviceStream s : streams) {
                copy.on(s);
                done.add(s.record());
            }
            done.forEach(DeviceEvent::synchronize);
            long t1 = System.nanoTime();
            done.forEach(DeviceEvent::close);
            if (i >= 0) {
                seconds[i] = (t1 - t0) / 1e9;
            }
        }
        Arrays.sort(seconds);
        return bytes / seconds[repeats / 2] / 1e9;
    }
}
