package io.gradsync.tasks.kernels;

import io.gradsync.tasks.kernels.launch.CudaKernels;
import io.gradsync.tasks.testing.BuiltinDifferential;
import io.gradsync.tasks.testing.CudaRunner;
import org.junit.jupiter.api.BeforeAll;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import io.gradsync.tasks.device.HostBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every built-in kernel run as plain Java (the reference) and as generated PTX on GPU 0, loaded
 * with cuModuleLoadData for the GPU's own compute capability; see {@link BuiltinDifferential}.
 * Needs a CUDA GPU: tagged {@code gpu}, fails (rather than skips) when run without one.
 */
@Tag("gpu")
class CudaDifferentialTest {
    private static CudaRunner cuda;

    @BeforeAll
    static void needGpu() {
        cuda = CudaRunner.firstOrNull();
        assertNotNull(cuda, "gpu-tagged test run without a usable CUDA driver and GPU");
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (KernelSpec spec : BuiltinKernels.all().stream().filter(s -> s.forms().contains(KernelSpec.Form.DEVICE)).toList()) {
            for (int n : new int[]{1, 1000, 4099, 1 << 20 | 3}) {
                for (int threads : new int[]{(n + 255) / 256 * 256, 132 * 2048}) {
                    cases.add(Arguments.of(spec, n, threads));
                }
            }
            // One large case per kernel: many grid-stride rounds per thread, and odd (vector tails).
            cases.add(Arguments.of(spec, (1 << 22) + 5, 132 * 2048));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} n={1} threads={2}")
    @MethodSource("cases")
    void cudaMatchesJava(KernelSpec spec, int n, int threads) {
        BuiltinDifferential.check(cuda, spec, n, threads);
    }

    /** Vector-form kernels of each element kind mix: 16-bit only, fp32, read-modify-write, in place, narrowing. */
    private static final List<String> VECTOR_KERNELS = List.of("average2Bf16", "average4", "sumIntoF16", "scaleBf16", "f32ToBf16");

    static Stream<Arguments> vectorCases() {
        return BuiltinDifferential.vectorCases(VECTOR_KERNELS, 1, 2, 3, 5, 1023, 4097, (1 << 20) + 3);
    }

    /**
     * The vector form where every array is aligned, the scalar form where any is not, both bit
     * for bit the Java method, for lengths around the vector width and with a scalar tail.
     */
    @ParameterizedTest(name = "{0} n={1} shifted={2} threads={3}")
    @MethodSource("vectorCases")
    void vectorFormChosenByAlignmentAndExact(KernelSpec spec, int n, int shifted, int threads) {
        boolean aligned = shifted == Integer.MIN_VALUE;
        BuiltinDifferential.check(aligned ? cuda : cuda.shifted(shifted), spec, n, threads);
        CudaKernels.PreparedLaunch launch = cuda.lastLaunch();
        int width = spec.compile().vectorWidth();
        assertTrue(width > 1, spec.name() + " should be element-wise");
        assertEquals(aligned ? width : 1, launch.vectorWidth(), "form chosen");
        int grid = (threads + BuiltinDifferential.LOCAL - 1) / BuiltinDifferential.LOCAL;
        int expectedGrid = aligned && threads >= n
                ? Math.min(grid, ((n + width - 1) / width + BuiltinDifferential.LOCAL - 1) / BuiltinDifferential.LOCAL) : grid;
        assertEquals(Math.max(1, expectedGrid), launch.shape().grid(), "grid");
    }

    /** Reductions whose vector form merges adjacent 16-bit loads; partials with odd and even slot counts. */
    private static final List<String> MERGED_KERNELS = List.of("checkFiniteBf16", "checkFiniteF16", "sumOfSquaresBf16",
            "sumOfSquaresF16", "sumOfSquaresPartialsBf16", "sumOfSquaresPartialsF16");

    static Stream<Arguments> mergedCases() {
        return BuiltinDifferential.vectorCases(MERGED_KERNELS, 1, 2, 3, 5, 1023, 1024, 4097, 4098, (1 << 20) + 3, (1 << 20) + 2);
    }

    /**
     * The merged-load form where the input is aligned (whatever the output's place), the scalar form
     * where it is not, both bit for bit the Java method; the launch shape as asked either way.
     */
    @ParameterizedTest(name = "{0} n={1} shifted={2} threads={3}")
    @MethodSource("mergedCases")
    void mergedLoadsChosenByAlignmentAndExact(KernelSpec spec, int n, int shifted, int threads) {
        boolean inputShifted = shifted == -1 || shifted == 0;
        BuiltinDifferential.check(shifted == Integer.MIN_VALUE ? cuda : cuda.shifted(shifted), spec, n, threads);
        CudaKernels.PreparedLaunch launch = cuda.lastLaunch();
        assertEquals(!inputShifted, launch.vectorized(), "form chosen");
        assertEquals(1, launch.vectorWidth());
        assertEquals((Math.min(threads, 4096) + BuiltinDifferential.LOCAL - 1) / BuiltinDifferential.LOCAL, launch.shape().grid(), "grid as asked");
    }

    /** {@code -Dgradsync.vectorLoads=false} keeps the scalar form (and the launch shape). */
    @Test
    void vectorFormCanBeSwitchedOff() {
        String old = System.getProperty(CudaKernels.VECTOR_PROPERTY);
        System.setProperty(CudaKernels.VECTOR_PROPERTY, "false");
        try {
            BuiltinDifferential.check(cuda, BuiltinKernels.byName("average2Bf16").orElseThrow(), 4097, 4352);
            assertFalse(cuda.lastLaunch().vectorized());
            assertEquals(68, cuda.lastLaunch().shape().grid());
        } finally {
            if (old == null) {
                System.clearProperty(CudaKernels.VECTOR_PROPERTY);
            } else {
                System.setProperty(CudaKernels.VECTOR_PROPERTY, old);
            }
        }
    }

    /** Slices at an offset (how a reduce-scatter passes 1/n of a bucket) touch nothing outside. */
    @Test
    void averageOfSlicesLeavesTheRestAlone() {
        CudaDevice gpu = cuda.device();
        int n = 10_000;
        int offset = 1_000;
        int count = 5_003;
        long bytes = 4L * n;
        try (CudaStream stream = gpu.createStream();
             CudaBuffer out = gpu.allocate(bytes); CudaBuffer a = gpu.allocate(bytes); CudaBuffer b = gpu.allocate(bytes);
             HostBuffer host = gpu.allocateHost(bytes)) {
            for (int i = 0; i < n; i++) {
                host.segment().setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
            }
            stream.copyFromHost(host, 0, a, 0, bytes);
            stream.copyFromHost(host, 0, b, 0, bytes);
            stream.fill32(out, 0, bytes, Float.floatToRawIntBits(-1f));
            KernelSpec avg = BuiltinKernels.average(2);
            CudaKernels.PreparedLaunch launch = CudaKernels.prepare(gpu, avg, count, new DeviceSlice(out, 4L * offset, count),
                    new DeviceSlice(a, 4L * offset, count), new DeviceSlice(b, 4L * offset, count), 2f);
            assertTrue(launch.vectorized(), "4000-byte offsets are 16-byte aligned");
            launch.launch(stream);
            stream.copyToHost(out, 0, host, 0, bytes);
            stream.synchronize();
            for (int i = 0; i < n; i++) {
                float expected = i >= offset && i < offset + count ? i : -1f;
                assertEquals(expected, host.segment().getAtIndex(ValueLayout.JAVA_FLOAT, i), "element " + i);
            }
            assertThrows(IllegalArgumentException.class, () -> CudaKernels.prepare(gpu, avg, n,
                    new DeviceSlice(out, 4, n), new DeviceSlice(a, 0, n), new DeviceSlice(b, 0, n), 2f), "overrun");
        }
    }
    /**
     * average2 with {@code out} the very same slice as {@code a0} (in place) must load a0 plainly
     * and still give (a0 + a1) * 0.5 exactly; with disjoint slices both inputs go through
     * {@code ld.global.nc}.
     */
    @Test
    void averageInPlaceAndDisjointWithNonCoherentLoads() {
        CudaDevice gpu = cuda.device();
        int n = (1 << 20) + 3;
        long bytes = 4L * n;
        KernelSpec avg = BuiltinKernels.average(2);
        try (CudaStream stream = gpu.createStream();
             CudaBuffer a0 = gpu.allocate(bytes); CudaBuffer a1 = gpu.allocate(bytes); CudaBuffer out = gpu.allocate(bytes);
             HostBuffer host = gpu.allocateHost(bytes)) {
            float[] x0 = new float[n];
            float[] x1 = new float[n];
            for (int i = 0; i < n; i++) {
                x0[i] = i * 0.37f - 1000f;
                x1[i] = (i % 977) * 1.0e-3f + 0.1f;
            }
            DeviceSlice s0 = DeviceSlice.whole(a0, 4);
            DeviceSlice s1 = DeviceSlice.whole(a1, 4);
            DeviceSlice so = DeviceSlice.whole(out, 4);
            upload(stream, host, x0, a0);
            upload(stream, host, x1, a1);

            CudaKernels.PreparedLaunch disjoint = CudaKernels.prepare(gpu, avg, n, so, s0, s1, 2f);
            assertEquals(Set.of("a0", "a1"), disjoint.nonCoherentArrays());
            assertEquals(4, disjoint.vectorWidth());
            disjoint.launch(stream);
            float[] got = download(stream, host, out, n);

            CudaKernels.PreparedLaunch inPlace = CudaKernels.prepare(gpu, avg, n, s0, s0, s1, 2f);
            assertEquals(Set.of("a1"), inPlace.nonCoherentArrays(), "a0 is also the output");
            assertEquals(4, inPlace.vectorWidth(), "in place: each lane reads its element before writing it");
            inPlace.launch(stream);
            float[] gotInPlace = download(stream, host, a0, n);
            for (int i = 0; i < n; i++) {
                float expected = (float) (((double) x0[i] + x1[i]) / 2);
                assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(got[i]), "disjoint, element " + i);
                assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(gotInPlace[i]), "in place, element " + i);
            }
        }
    }

    private static void upload(CudaStream stream, HostBuffer host, float[] values, CudaBuffer to) {
        host.segment().copyFrom(MemorySegment.ofArray(values));
        stream.copyFromHost(host, 0, to, 0, 4L * values.length);
        stream.synchronize();
    }

    private static float[] download(CudaStream stream, HostBuffer host, CudaBuffer from, int n) {
        stream.copyToHost(from, 0, host, 0, 4L * n);
        stream.synchronize();
        return host.segment().asSlice(0, 4L * n).toArray(ValueLayout.JAVA_FLOAT);
    }
}
