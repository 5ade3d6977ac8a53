package io.gradsync.tasks.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import io.gradsync.tasks.compiler.access.KernelIrs;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Which built-in kernels the compiler's element-wise analysis finds element-wise (and so vectorizable). */
class BuiltinElementwiseTest {
    private static boolean isElementwiseBuiltin(String name) {
        return name.matches("average(InPlace)?\\d(Bf16|F16)?|sumInto(Bf16|F16)?|scale(Bf16|F16)?|copy(Bf16|F16)?|(bf16|f16)ToF32|f32To(Bf16|F16)");
    }

    static Stream<KernelSpec> builtins() {
        return BuiltinKernels.all().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("builtins")
    void builtinAveragesSumsScalesCopiesAndCastsAreElementwise(KernelSpec spec) {
        CompiledKernel k = spec.compile();
        boolean expected = isElementwiseBuiltin(spec.name());
        assertEquals(expected, k.isElementwise(), spec.name() + ": " + ElementwiseLoop.rejection(KernelIrs.ir(k)));
        if (!expected) {
            assertEquals(1, k.vectorWidth());
            assertTrue(spec.name().startsWith("sumOfSquares") || spec.name().equals("sumPartials") || spec.name().startsWith("checkFinite"), "unexpected non-element-wise " + spec.name());
            return;
        }
        ElementwiseLoop loop = KernelIrs.elementwiseLoop(k).orElseThrow();
        boolean fp32 = KernelIrs.ir(k).arrayParams().stream().anyMatch(a -> a.element().bytes() == 4);
        assertEquals(fp32 ? 4 : 8, k.vectorWidth(), "16 bytes of the widest array");
        // every array is accessed, the bound is the first array's length
        Set<String> all = Set.copyOf(KernelIrs.ir(k).arrayParams().stream().map(a -> a.name()).toList());
        assertEquals(all, loop.accessedArrays());
        assertEquals(Optional.of(spec.name().endsWith("ToF32") || spec.name().startsWith("f32To") ? "out"
                : KernelIrs.ir(k).arrayParams().getFirst().name()), loop.boundArray());
        assertEquals(KernelIrs.ir(k).writtenArrays(), Set.copyOf(loop.stored().stream().map(a -> a.name()).toList()));
        for (var a : KernelIrs.ir(k).arrayParams()) {
            int bytes = loop.accessBytes(a);
            assertTrue(bytes == 8 || bytes == 16, a + ": " + bytes + "-byte accesses");
        }
    }

    @Test
    void contextAndSerialKernelsAreNot() {
        for (String name : List.of("sumOfSquares", "sumOfSquaresBf16", "sumOfSquaresPartials", "sumOfSquaresPartialsF16")) {
            CompiledKernel k = BuiltinKernels.byName(name).orElseThrow().compile();
            assertEquals(KernelStyle.CONTEXT, k.style());
            assertFalse(k.isElementwise(), name);
        }
    }

}
