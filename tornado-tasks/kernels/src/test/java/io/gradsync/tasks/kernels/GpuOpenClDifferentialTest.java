package io.gradsync.tasks.kernels;

import io.gradsync.tasks.testing.BuiltinDifferential;
import io.gradsync.tasks.testing.OpenClRunner;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Every element-wise built-in on an OpenCL GPU (NVIDIA's OpenCL on the GPU node; fails without
 * one), in its vector form where the arrays are aligned and its scalar form where one is not, bit
 * for bit the Java method ({@link OpenClDifferentialTest} runs on the first OpenCL device, PoCL in CI).
 */
@Tag("gpu")
class GpuOpenClDifferentialTest {
    private static OpenClRunner cl;

    @BeforeAll
    static void needOpenClGpu() {
        cl = OpenClRunner.gpuOrNull();
        assertNotNull(cl, "gpu-tagged test run without an OpenCL GPU");
    }

    static Stream<Arguments> cases() {
        return BuiltinDifferential.vectorCases(BuiltinKernels.all().stream().filter(k -> k.compile().openClVectorWidth() > 1)
                .map(KernelSpec::name).toList(), 1, 9, 1003, (1 << 20) + 3);
    }

    @ParameterizedTest(name = "{0} n={1} shifted={2} threads={3}")
    @MethodSource("cases")
    void vectorAndScalarFormsMatchJava(KernelSpec spec, int n, int shifted, int threads) {
        boolean aligned = shifted == Integer.MIN_VALUE;
        BuiltinDifferential.check(aligned ? cl : cl.shifted(shifted), spec, n, threads);
        assertEquals(aligned ? spec.compile().openClVectorWidth() : 1, cl.lastVectorWidth(), "form chosen");
    }
}
