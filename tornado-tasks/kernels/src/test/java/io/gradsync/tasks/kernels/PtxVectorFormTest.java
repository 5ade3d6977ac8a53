package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.ptx.PtxEmitter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The text of the vector form (no ptxas needed; assembly is in {@link PtxAssemblesTest}, behaviour
 * in {@link PtxVectorSemanticsTest}): which vector accesses, which alignment, the arithmetic of the
 * scalar body repeated once per lane plus once for the tail.
 */
class PtxVectorFormTest {

    private static CompiledKernel kernel(String name) {
        return BuiltinKernels.byName(name).orElseThrow().compile();
    }

    private static long count(String ptx, String prefix) {
        return ptx.lines().map(String::trim).filter(l -> l.startsWith(prefix)).count();
    }

    @Test
    void average2Bf16() {
        CompiledKernel k = kernel("average2Bf16");
        String ptx = k.ptx(90, Set.of("a0", "a1"), true);
        assertEquals(2, count(ptx, "ld.global.nc.v4.b32 "), "8 bf16 of a0 and of a1 in 16 bytes each");
        assertEquals(1, count(ptx, "st.global.v4.b32 "), "8 bf16 of out in one store");
        assertEquals(3, count(ptx, ".param .u64 .ptr .global .align 16 "));
        assertEquals(8 + 1, count(ptx, "cvt.rn.bf16.f64 "), "8 lanes and the tail, each rounding the double mean once");
        assertEquals(1, count(ptx, "div.rn.f64 "), "one division: the reciprocal, before the loop");
        assertEquals(2, count(ptx, "ld.global.nc.u16 "), "the tail's scalar loads");
        assertTrue(ptx.contains("// vectorized: 8 elements per thread and access\n"));
    }

    /** The kernels outside element-wise loops whose vector form merges adjacent loads, and how wide. */
    @Test
    void theSixteenBitReductionsMergeTheirLoads() {
        Map<String, Map<String, Integer>> merged = new TreeMap<>();
        for (KernelSpec spec : BuiltinKernels.all()) {
            CompiledKernel k = spec.compile();
            if (!k.isElementwise() && k.hasVectorForm()) {
                merged.put(spec.name(), KernelIrs.adjacentLoads(k).alignments());
            }
        }
        assertEquals(new TreeMap<>(Map.of(
                "checkFiniteBf16", Map.of("x", 8), "checkFiniteF16", Map.of("x", 8),
                "sumOfSquaresBf16", Map.of("x", 8), "sumOfSquaresF16", Map.of("x", 8),
                "sumOfSquaresPartialsBf16", Map.of("x", 4), "sumOfSquaresPartialsF16", Map.of("x", 4))), merged);
        String partials = kernel("sumOfSquaresPartialsBf16").ptx(90, Set.of("x"), true);
        assertEquals(8, count(partials, "ld.global.nc.v2.b16 "), "slots 2q and 2q + 1: eight pairs a round");
        assertTrue(partials.contains("// vectorized: adjacent loads merged, arrays aligned to {x=4} bytes\n"), partials);
    }

    @Test
    void mixedWidthsGiveEachArrayItsOwnAccess() {
        String ptx = kernel("f32ToBf16").ptx(90, Set.of("in"), true);
        assertEquals(1, count(ptx, "ld.global.nc.v4.f32 "), "4 fp32: 16 bytes");
        assertEquals(1, count(ptx, "st.global.v2.b32 "), "4 bf16: 8 bytes");
        assertTrue(ptx.contains(".align 16 f32ToBf16_p0_in_ptr") && ptx.contains(".align 8 f32ToBf16_p1_out_ptr"), ptx);
        String doubles = new KernelCompiler().compile(loadShape(), "yesDoubles").ptx(90, Set.of(), true);
        assertEquals(1, count(doubles, "ld.global.v2.f64 "));
        assertEquals(1, count(doubles, "ld.global.v2.f32 "));
        assertEquals(1, count(doubles, "st.global.v2.f64 "));
    }

    private static Class<?> loadShape() {
        try {
            return Class.forName("io.gradsync.tasks.compiler.testing.ElementwiseShapes");
        } catch (ClassNotFoundException e) {
            throw new AssertionError(e);
        }
    }

    static Stream<KernelSpec> elementwiseKernels() {
        return BuiltinKernels.all().stream().filter(k -> k.compile().isElementwise());
    }

    /**
     * Every floating-point operation and conversion of the scalar body, width + 1 times (lanes and
     * tail), nothing else; the code before the loop (a reciprocal) once, as in the scalar form.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("elementwiseKernels")
    void sameArithmeticOncePerLaneAndForTheTail(KernelSpec spec) {
        CompiledKernel k = spec.compile();
        for (int sm : new int[]{75, 90}) {
            String vectorPtx = k.ptx(sm, Set.of(), true);
            Map<String, Long> before = arithmetic(vectorPtx.substring(0, vectorPtx.indexOf("$V_loop:")));
            Map<String, Long> scalar = arithmetic(k.ptx(sm));
            Map<String, Long> expected = new TreeMap<>();
            scalar.forEach((op, n) -> {
                long once = before.getOrDefault(op, 0L);
                expected.put(op, once + (n - once) * (k.vectorWidth() + 1));
            });
            assertEquals(expected, arithmetic(vectorPtx), spec.name() + " sm_" + sm);
        }
    }

    private static Map<String, Long> arithmetic(String ptx) {
        Map<String, Long> ops = new TreeMap<>();
        ptx.lines().map(String::trim)
                .filter(l -> l.matches("(add|sub|mul|div|fma|sqrt|neg|abs|min|max)\\.(rn\\.)?f(32|64) .*|cvt\\..*f(16|32|64).*"))
                .forEach(l -> ops.merge(l.substring(0, l.indexOf(' ')), 1L, Long::sum));
        return ops;
    }

    @Test
    void scalarFormIsUnchangedAndCachedApart() {
        CompiledKernel k = kernel("sumIntoF16");
        assertSame(k.ptx(90, Set.of("x")), k.ptx(90, Set.of("x"), false));
        assertSame(k.ptx(90, Set.of("x"), true), k.ptx(90, Set.of("x"), true));
        assertNotEquals(k.ptx(90, Set.of("x"), true), k.ptx(90, Set.of("x"), false));
        assertFalse(k.ptx(90).contains(".v4.") || k.ptx(90).contains(".v2."), "scalar form has no vector access");
        assertFalse(k.ptx(90).contains("vectorized"));
    }

    @Test
    void kernelsThatAreNotElementwiseHaveNoVectorForm() {
        for (String name : new String[]{"checkFinite", "sumOfSquares", "sumOfSquaresPartials", "sumPartials"}) {
            CompiledKernel k = kernel(name);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> k.ptx(90, Set.of(), true), name);
            assertTrue(e.getMessage().contains("not element-wise") && e.getMessage().contains("no adjacent elements"), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PtxEmitter.entry(KernelIrs.ir(new KernelCompiler().compile(loadShape(), "noConditionalStore")), 90, Set.of(), true));
        assertTrue(e.getMessage().contains("branches inside the loop body"), e.getMessage());
    }
}
