package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.testing.Ptxas;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every built-in kernel's PTX must pass ptxas, plain and with non-coherent loads (skipped, visibly,
 * where ptxas is not installed).
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

    @Test
    void wholeModuleAssemblesForSeveralTargets() throws Exception {
        for (int sm : new int[]{75, 80, 86, 89, 90}) {
            Ptxas.assemble(KernelSources.allInOne(KernelSources.Target.PTX, sm), sm);
        }
    }
}
