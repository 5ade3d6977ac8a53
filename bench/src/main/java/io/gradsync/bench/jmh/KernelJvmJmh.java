package io.gradsync.bench.jmh;

import io.gradsync.bench.DeviceForms;
import io.gradsync.bench.JvmForms;
import io.gradsync.bench.KernelCompare;
import io.gradsync.tasks.kernels.BuiltinKernels;
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
 * One run of a built-in kernel as the Java method it is, spread over the cores as
 * {@code gradsync compare}'s JVM column runs it. The work is synchronous, so nothing escapes the
 * timing; arrays are off-heap and hold random non-zero values. Run it as
 * {@code java -jar bench/target/benchmarks.jar KernelJvmJmh -p kernel=average4,sumInto}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class KernelJvmJmh {
    @Param({"average4"})
    public String kernel;

    /** Bytes in the first array (every full-length array of the kernel). */
    @Param({"16777216"})
    public long bytes;

    /** What the arrays hold: uniform or normal (see {@code KernelCompare.Values}). */
    @Param({"uniform"})
    public String data;

    private JvmForms.OnJvm prepared;

    @Setup(Level.Trial)
    public void setUp() {
        prepared = JvmForms.OnJvm.prepare(BuiltinKernels.byName(kernel)
                .orElseThrow(() -> new IllegalArgumentException("no kernel " + kernel)), bytes, KernelCompare.Values.parse(data));
    }

    @Benchmark
    public void run() {
        prepared.launch();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        prepared.close();
    }
}
