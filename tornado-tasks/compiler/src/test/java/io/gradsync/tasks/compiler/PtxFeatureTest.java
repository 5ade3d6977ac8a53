package io.gradsync.tasks.compiler;

import io.gradsync.tasks.compiler.testing.*;
import io.gradsync.tasks.compiler.testing.Ptxas;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.Method;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** PTX of every feature kernel assembles (sm_75 integer bf16 path and sm_90); the compiler cache works. */
class PtxFeatureTest {

    private static Method method(String name) {
        return Arrays.stream(FeatureKernels.class.getDeclaredMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"intOps", "floatOps", "loops", "contextStyle", "serial", "halves", "atomics", "expKernel", "conversions"})
    void ptxAssembles(String name) throws Exception {
        assumeTrue(Ptxas.available(), "ptxas is not on the PATH: skipped");
        CompiledKernel k = new KernelCompiler().compile(method(name));
        Ptxas.assemble(k.ptx(90), 90);
        Ptxas.assemble(k.ptx(75), 75);
        if (k.isElementwise()) { // conversions, expKernel: the form CudaRunner's aligned arrays get
            Ptxas.assemble(k.ptx(90, java.util.Set.of(), true), 90);
            Ptxas.assemble(k.ptx(75, java.util.Set.copyOf(k.readOnlyArrays()), true), 75);
        }
    }

    /** The element-wise shapes of {@link ElementwiseAnalysisTest}, in their vector form. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"yesScalarBound", "yesLocalBound", "yesIndexAsValue", "yesInlinedCall", "yesLocalReassigned",
            "yesDoubles", "yesRawBits", "yesReadModifyWrite", "yesFill"})
    void vectorFormOfElementwiseShapesAssembles(String name) throws Exception {
        assumeTrue(Ptxas.available(), "ptxas is not on the PATH: skipped");
        CompiledKernel k = new KernelCompiler().compile(ElementwiseShapes.class, name);
        for (int sm : new int[]{75, 90}) {
            Ptxas.assemble(k.ptx(sm, java.util.Set.of(), true), sm);
            Ptxas.assemble(k.ptx(sm, java.util.Set.copyOf(k.readOnlyArrays()), true), sm);
        }
    }

    @Test
    void compilerCachesByMethod() {
        KernelCompiler c = new KernelCompiler();
        assertSame(c.compile(method("loops")), c.compile(FeatureKernels.class, "loops"));
        CompiledKernel k = c.compile(method("loops"));
        assertSame(k.ptx(90), k.ptx(90));
        assertEquals(KernelStyle.PARALLEL_LOOP, k.style());
        assertEquals(KernelStyle.CONTEXT, c.compile(method("contextStyle")).style());
        assertEquals(KernelStyle.SERIAL, c.compile(method("serial")).style());
        assertEquals(5, k.deviceArgumentCount());
    }

}
