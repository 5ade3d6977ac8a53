package io.gradsync.bench.jmh;

import io.gradsync.bench.BackendDevices;
import io.gradsync.bench.DeviceForms;
import io.gradsync.bench.JvmForms;
import io.gradsync.bench.KernelCompare;
import io.gradsync.bench.NvccReference;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
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
 * One launch of a built-in kernel per invocation on a device, the path {@code gradsync compare}
 * times with device events: {@code form} is ptx (generated PTX), nvcc (the CUDA C reference built
 * with nvcc -O3), or opencl (generated OpenCL C). The JVM form is {@link KernelJvmJmh}.
 *
 * <p>Pitfalls this avoids: each invocation waits for its launch (stream synchronize), so queued
 * launches cannot pile up unmeasured; buffers hold random non-zero values, not zeros; modules are
 * compiled and loaded in setup, not measured. The host wait adds a few microseconds per launch,
 * so use sizes where the kernel takes far longer (the default). Run it as
 * {@code java -jar bench/target/benchmarks.jar KernelJmh -p form=opencl -p kernel=average4}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class KernelJmh {

    @Param({"average4"})
    public String kernel;

    @Param({"opencl"})
    public String form;

    /** Bytes in the first array (every full-length array of the kernel). */
    @Param({"16777216"})
    public long bytes;

    /** Thread blocks for element-wise kernels; 0: one thread per element. */
    @Param({"0"})
    public int grid;

    private DeviceForms.OnDevice onDevice;

    @Setup(Level.Trial)
    public void setUp() {
        KernelSpec spec = BuiltinKernels.byName(kernel).orElseThrow(() -> new IllegalArgumentException("no kernel " + kernel));
        KernelCompare.Variant variant = switch (form.toLowerCase(Locale.ROOT)) {
            case "ptx" -> KernelCompare.Variant.PTX;
            case "nvcc" -> KernelCompare.Variant.NVCC;
            case "opencl" -> KernelCompare.Variant.OPENCL;
            default -> throw new IllegalArgumentException("form " + form + ": ptx, nvcc or opencl (the JVM form is the jvm benchmark)");
        };
        Device device = variant == KernelCompare.Variant.OPENCL ? BackendDevices.openCl(1).getFirst() : CudaRuntime.device(0);
        NvccReference nvcc = variant == KernelCompare.Variant.NVCC
                ? NvccReference.find().orElseThrow(() -> new IllegalStateException("nvcc not on the PATH")) : null;
        onDevice = DeviceForms.OnDevice.prepare(variant, spec, device, bytes, grid, nvcc);
    }

    @Benchmark
    public void launch() {
        onDevice.launch();
        onDevice.stream().synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        onDevice.close();
    }
}
