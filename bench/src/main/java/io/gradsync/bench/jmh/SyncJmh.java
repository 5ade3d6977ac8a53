package io.gradsync.bench.jmh;

import io.gradsync.bench.BackendDevices;
import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One gradient sync per invocation, the same operation {@code gradsync bench} times.
 *
 * <p>Pitfalls this avoids: the replicas are filled once with non-zero values, since zeros can be
 * faster than real data on some paths; the synchronizer (its pinned staging, streams, threads) is
 * built once per trial so that its construction is not measured; {@code synchronize} returns only
 * when every device holds the result, so no device work escapes the timing. Run it as
 * {@code java -jar bench/target/benchmarks.jar SyncJmh -p backend=cpu -p devices=4}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class SyncJmh {

    @Param({"cpu"})
    public String backend;

    /** For cpu (and single): auto is CUDA when present, else JVM devices. Other backends have their own runtime. */
    @Param({"auto"})
    public String runtime;

    @Param({"2"})
    public int devices;

    @Param({"1048576", "16777216"})
    public long bytes;

    @Param({"fp32"})
    public String dtype;

    private BackendDevices pool;
    private List<? extends Device> selected;
    private final List<DeviceBuffer> buffers = new ArrayList<>();
    private List<Replica> replicas;
    private GradientSynchronizer sync;

    @Setup(Level.Trial)
    public void setUp() {
        DeviceRuntime rt = runtime.equals("auto") ? DeviceCatalog.preferredRuntime()
                : DeviceRuntime.valueOf(runtime.toUpperCase(Locale.ROOT));
        // as gradsync bench: opencl on OpenCL devices, ptx and nccl on CUDA, cpu on the runtime asked for
        pool = new BackendDevices(rt, devices);
        selected = pool.devicesFor(SyncBackend.parse(backend));
        DType type = DType.parse(dtype);
        replicas = new ArrayList<>();
        for (Device d : selected) {
            DeviceBuffer b = d.allocate(bytes);
            try (DeviceStream s = d.createStream()) {
                s.fill32(b, 0, bytes & ~3L, 0x3F000000 + d.ordinal()); // 0.5 and neighbours, never zero
                s.synchronize();
            }
            buffers.add(b);
            replicas.add(Replica.on(d).add("gradients", b, type).build());
        }
        sync = Synchronizers.create(SyncBackend.parse(backend), selected);
    }

    @Benchmark
    public void synchronize() {
        sync.synchronize(replicas);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sync.close();
        buffers.forEach(DeviceBuffer::close);
        pool.close();
    }
}
