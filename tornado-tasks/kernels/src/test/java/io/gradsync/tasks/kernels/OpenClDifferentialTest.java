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
}
