package io.gradsync.tasks.kernels;

import io.gradsync.tasks.testing.BuiltinDifferential;
import io.gradsync.tasks.testing.OpenClRunner;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every built-in kernel run as plain Java (the reference) and as the generated OpenCL C on the
 * local OpenCL device (PoCL in CI); see {@link BuiltinDifferential}.
 */
class OpenClDifferentialTest {
    private static OpenClRunner cl;

    @BeforeAll
    static void needOpenCl() {
        cl = OpenClRunner.firstOrNull();
        assumeTrue(cl != null, "no OpenCL platform: OpenCL differential tests skipped");
    }

    /** Size 1, sizes that are not multiples of the group size, a large size; one thread per element and a grid-stride launch. */
    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (KernelSpec spec : BuiltinKernels.all().stream().filter(s -> s.forms().contains(KernelSpec.Form.DEVICE)).toList()) {
            for (int n : new int[]{1, 1000, 4099, 1 << 20 | 3}) {
                for (int threads : new int[]{(n + 63) / 64 * 64, 256}) {
                    if (spec.name().startsWith("average") && n == (1 << 20 | 3) && !spec.name().matches("average[28].*")) {
                        continue; // large size for k = 2 and 8 only: the others add run time, not coverage
                    }
                    cases.add(Arguments.of(spec, n, threads));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} n={1} threads={2}")
    @MethodSource("cases")
    void openClMatchesJava(KernelSpec spec, int n, int threads) {
        BuiltinDifferential.check(cl, spec, n, threads);
    }

    private static final List<String> VECTOR_KERNELS = List.of("average2Bf16", "average3F16", "average4", "sumIntoF16", "scaleBf16",
            "f32ToBf16", "bf16ToF32", "copyF16");

    static Stream<Arguments> vectorCases() {
        return BuiltinDifferential.vectorCases(VECTOR_KERNELS, 1, 3, 7, 8, 9, 17, 1003, 4097);
    }

    /**
     * The OpenCL C vector form where every array is aligned, the scalar form where any is not,
     * both bit for bit the Java method, for lengths around the vector width and with a scalar tail.
     */
    @ParameterizedTest(name = "{0} n={1} shifted={2} threads={3}")
    @MethodSource("vectorCases")
    void vectorFormChosenByAlignmentAndExact(KernelSpec spec, int n, int shifted, int threads) {
        boolean aligned = shifted == Integer.MIN_VALUE;
        BuiltinDifferential.check(aligned ? cl : cl.shifted(shifted), spec, n, threads);
        int width = spec.compile().openClVectorWidth();
        assertTrue(width > 1, spec.name() + " should have an OpenCL vector form");
        assertEquals(aligned ? width : 1, cl.lastVectorWidth(), "form chosen");
    }
}
