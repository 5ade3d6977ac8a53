package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.testing.Ptxas;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every built-in kernel's PTX must pass ptxas, plain and with non-coherent loads, and the vector
 * form of the element-wise ones (skipped, visibly, where ptxas is not installed).
 */
class PtxAssemblesTest {

    @BeforeAll
    static void needPtxas() {
        assumeTrue(Ptxas.available(), "ptxas is not on the PATH: PTX assembly tests skipped");
    }

    static Stream<KernelSpec> kernels() {
        return BuiltinKernels.all().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kernels")
    void eachKernelAssemblesForSm90(KernelSpec spec) throws Exception {
        String ptx = spec.compile().ptx(90);
        assertTrue(ptx.contains(".target sm_90") && ptx.contains(".version 7.8"), "header");
        assertTrue(ptx.contains(".visible .entry " + spec.name() + "("), "entry name");
        Ptxas.assemble(ptx, 90);
    }

    /** With every read-only array loaded through {@code ld.global.nc}, as a launch without aliasing gets. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("kernels")
    void eachKernelAssemblesWithNonCoherentLoads(KernelSpec spec) throws Exception {
        CompiledKernel k = spec.compile();
        Set<String> nc = Set.copyOf(k.readOnlyArrays());
        for (int sm : new int[]{75, 90}) {
            String ptx = k.ptx(sm, nc);
            assertEquals(!nc.isEmpty(), ptx.contains("ld.global.nc."), "nc loads present exactly when some array is read-only");
            Ptxas.assemble(ptx, sm);
        }
    }

    static Stream<KernelSpec> elementwiseKernels() {
        return BuiltinKernels.all().stream().filter(k -> k.compile().isElementwise());
    }

    /**
     * The vector form of every element-wise built-in, with plain and with non-coherent loads, on
     * the oldest and the newest target (sm_75 rounds bf16 with integer code): one vector load per
     * loaded array, one vector store per stored array, and the scalar tail.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("elementwiseKernels")
    void eachElementwiseKernelAssemblesVectorized(KernelSpec spec) throws Exception {
        CompiledKernel k = spec.compile();
        var loop = KernelIrs.elementwiseLoop(k).orElseThrow();
        for (Set<String> nc : List.of(Set.<String>of(), Set.copyOf(k.readOnlyArrays()))) {
            for (int sm : new int[]{75, 90}) {
                String ptx = k.ptx(sm, nc, true);
                long vectorLoads = ptx.lines().filter(l -> l.trim().matches("ld\\.global\\.(nc\\.)?v[24]\\..*")).count();
                long ncVectorLoads = ptx.lines().filter(l -> l.trim().startsWith("ld.global.nc.v")).count();
                long vectorStores = ptx.lines().filter(l -> l.trim().matches("st\\.global\\.v[24]\\..*")).count();
                assertEquals(loop.loaded().size(), vectorLoads, "one vector load per loaded array:\n" + ptx);
                assertEquals(nc.size(), ncVectorLoads, "nc exactly for the read-only arrays");
                assertEquals(loop.stored().size(), vectorStores, "one vector store per stored array");
                assertTrue(ptx.contains("$V_tail_loop:"), "scalar tail");
                Ptxas.assemble(ptx, sm);
            }
        }
    }

    static Stream<KernelSpec> mergedLoadKernels() {
        return BuiltinKernels.all().stream().filter(k -> k.compile().hasVectorForm() && !k.compile().isElementwise());
    }

    /**
     * The vector form of the built-ins that merge adjacent loads (the 16-bit reductions), plain and
     * non-coherent, oldest and newest target: vector loads of the 16-bit input, which the scalar
     * form has none of.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("mergedLoadKernels")
    void eachMergedLoadKernelAssemblesVectorized(KernelSpec spec) throws Exception {
        CompiledKernel k = spec.compile();
        for (Set<String> nc : List.of(Set.<String>of(), Set.copyOf(k.readOnlyArrays()))) {
            for (int sm : new int[]{75, 90}) {
                String ptx = k.ptx(sm, nc, true);
                String prefix = nc.isEmpty() ? "ld.global.v" : "ld.global.nc.v";
                assertTrue(ptx.lines().anyMatch(l -> l.trim().startsWith(prefix) && l.contains(".b16 ")), ptx);
                assertTrue(k.ptx(sm, nc).lines().noneMatch(l -> l.trim().matches("ld\\.global\\.(nc\\.)?v[24]\\..*")), "scalar form");
                Ptxas.assemble(ptx, sm);
            }
        }
    }

    @Test
    void wholeModuleAssemblesForSeveralTargets() throws Exception {
        for (int sm : new int[]{75, 80, 86, 89, 90}) {
            Ptxas.assemble(KernelSources.allInOne(KernelSources.Target.PTX, sm), sm);
        }
    }
}
