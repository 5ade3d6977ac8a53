package io.gradsync.bench;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.kernels.DeviceSlice;
import io.gradsync.tasks.kernels.internal.CoreSpread;
import io.gradsync.tasks.kernels.internal.JvmKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.kernels.launch.OpenClKernels;
import io.gradsync.tasks.opencl.OpenClQueue;
import static io.gradsync.bench.KernelCompare.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The JVM form of {@link KernelCompare}: the Java method itself (or the built-in's JVM fast form),
 * timed on the host, its work being synchronous; the figure is the median of the timed calls
 * after a warm-up until steady.
 */
public final class JvmForms {
    private JvmForms() {
    }

    /** A kernel's JVM figure, and that of the reference kernel timed in alternation with it. */
    public record Beside(Cell cell, double referenceGbPerSecond) {
        /** The kernel's GB/s as a fraction of the reference's. */
        public double ratio() {
            return cell.gbPerSecond() / referenceGbPerSecond;
        }
    }

    /**
     * The Java method itself (or the built-in's JVM form), over whole arrays as a task graph runs
     * it, spread over the cores by JvmKernels, warmed up, with {@code reference} (prepared and
     * warmed) timed call for call between the kernel's timed calls: on a shared host whose speed
     * drifts over a table, the two medians then come from the same stretch of time, and their
     * ratio compares the kernels alone.
     */
    public static Beside onJvmBeside(KernelSpec spec, OnJvm reference, long bytes, Repeats r, Values values) {
        try (OnJvm k = OnJvm.prepare(spec, bytes, values)) {
            warmUp(k::launch, r);
            reference.launch(); // its lines back in the caches, as the kernel's are
            double[] mine = new double[r.timed()];
            double[] theirs = new double[r.timed()];
            for (int i = 0; i < r.timed(); i++) {
                mine[i] = microsOf(k::launch);
                theirs[i] = microsOf(reference::launch);
            }
            double micros = median(mine);
            double referenceMicros = median(theirs);
            return new Beside(new Cell(micros, k.trafficBytes() / (micros * 1e3), -1, null),
                    reference.trafficBytes() / (referenceMicros * 1e3));
        }
    }

    /** One kernel ready to run as Java: off-heap arrays with random non-zero values. */
    public static final class OnJvm implements AutoCloseable {
        private final Arena arena;
        private final long trafficBytes;
        private Runnable launch;

        private OnJvm(Arena arena, long trafficBytes) {
            this.arena = arena;
            this.trafficBytes = trafficBytes;
        }

        public static OnJvm prepare(KernelSpec spec, long bytes, Values values) {
            int n = elementsFor(spec, bytes);
            List<Arg> args = arguments(spec, n);
            OnJvm k = new OnJvm(Arena.ofShared(), traffic(spec, args));
            MemorySegment[] segments = new MemorySegment[args.size()];
            long seed = System.nanoTime();
            for (int i = 0; i < args.size(); i++) {
                Arg a = args.get(i);
                if (a.element() != null) {
                    segments[i] = k.arena.allocate(Math.max(8, a.bytes()), 64);
                    fill(a, segments[i], seed + i, values);
                }
            }
            // as a task graph on a JVM device runs it: whole arrays, the JVM spreading the work itself
            Object[] whole = wrapAll(args, segments, 0, n);
            LaunchShape shape = spec.launchShape(n);
            k.launch = () -> JvmKernels.run(spec, shape, whole);
            return k;
        }

        /**
         * A copy of {@code bytes} between two buffers, one slice per core: the reference of the JVM's
         * figures. On the threads the kernels run on ({@link CoreSpread}), so that a ratio compares
         * the kernels' work alone: on another pool's threads the copy was slowed by the kernels'
         * helpers, still spinning after a launch, and the ratios flattered the kernels.
         */
        public static OnJvm copy(long bytes) {
            OnJvm k = new OnJvm(Arena.ofShared(), 2 * bytes);
            MemorySegment a = k.arena.allocate(bytes, 64);
            MemorySegment b = k.arena.allocate(bytes, 64);
            a.fill((byte) 1);
            int parts = Math.max(1, Runtime.getRuntime().availableProcessors());
            k.launch = () -> CoreSpread.each(parts, 2 * bytes / parts, p -> {
                long from = bytes * p / parts;
                long to = bytes * (p + 1) / parts;
                MemorySegment.copy(a, from, b, from, to - from);
            });
            return k;
        }

        /** {@link #copy} warmed up as {@link #onJvmBeside} warms a kernel, for its reference. */
        public static OnJvm warmedCopy(long bytes, Repeats r) {
            OnJvm k = copy(bytes);
            warmUp(k::launch, r);
            return k;
        }

        /** Runs the kernel once, to completion. */
        public void launch() {
            launch.run();
        }

        public long trafficBytes() {
            return trafficBytes;
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    /** JVM copy bandwidth (read + write): one parallel copy of {@code bytes}, as the kernels are parallel. */
    public static double jvmCopyBandwidth(long bytes, Repeats r) {
        try (OnJvm copy = OnJvm.copy(bytes)) {
            double micros = timeOnHost(copy::launch, r);
            return copy.trafficBytes() / (micros * 1e3);
        }
    }


    private static double timeOnHost(Runnable work, Repeats r) {
        warmUp(work, r);
        double[] micros = new double[r.timed()];
        for (int i = 0; i < r.timed(); i++) {
            micros[i] = microsOf(work);
        }
        return median(micros);
    }

    /**
     * By time as well as by count, as bench warms up, and until steady: a few calls of a long loop
     * can leave a Java kernel in on-stack-replaced or not yet recompiled code.
     */
    private static void warmUp(Runnable work, Repeats r) {
        Warmup.untilSteady(r.warmup(), 5, work);
    }

    private static double microsOf(Runnable work) {
        long t0 = System.nanoTime();
        work.run();
        return (System.nanoTime() - t0) / 1e3;
    }

}
