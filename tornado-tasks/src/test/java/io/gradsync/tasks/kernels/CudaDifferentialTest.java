package io.gradsync.tasks.kernels;

import io.gradsync.tasks.testing.BuiltinDifferential;
import io.gradsync.tasks.testing.CudaRunner;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertNotNull;

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
        cuda = CudaRunner.sharedOrNull();
        assertNotNull(cuda, "gpu-tagged test run without a usable CUDA driver and GPU");
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (KernelSpec spec : BuiltinKernels.all()) {
            for (int n : new int[]{1, 1000, 4099, 1 << 20 | 3, 1 << 24}) {
                for (int threads : new int[]{(n + 255) / 256 * 256, 132 * 2048}) {
                    cases.add(Arguments.of(spec, n, threads));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} n={1} threads={2}")
    @MethodSource("cases")
    void cudaMatchesJava(KernelSpec spec, int n, int threads) {
        BuiltinDifferential.check(cuda, spec, n, threads);
    }
}
