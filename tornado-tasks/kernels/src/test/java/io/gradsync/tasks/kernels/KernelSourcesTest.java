package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.KernelFunctions;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.MethodReferences;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KernelSourcesTest {

    @Test
    void registryListsEveryKernel() {
        List<KernelSpec> all = BuiltinKernels.all();
        for (int k = 2; k <= 8; k++) {
            for (String suffix : new String[]{"", "Bf16", "F16"}) {
                assertTrue(BuiltinKernels.byName("average" + k + suffix).isPresent(), "average" + k + suffix);
            }
        }
        for (String name : new String[]{"sumInto", "scale", "bf16ToF32", "f32ToBf16", "f16ToF32", "f32ToF16", "checkFinite", "sumOfSquares", "sumOfSquaresPartials", "sumOfSquaresPartialsBf16", "sumPartials", "copy", "copyBf16", "copyF16"}) {
            assertTrue(BuiltinKernels.byName(name).isPresent(), name);
        }
        assertEquals(44, all.size());
        assertEquals(KernelStyle.CONTEXT, BuiltinKernels.byName("sumOfSquares").orElseThrow().style());
        assertEquals(KernelStyle.PARALLEL_LOOP, BuiltinKernels.average(4).style());
        assertEquals("average8Bf16", BuiltinKernels.averageBf16(8).name());
        assertEquals("average2F16", BuiltinKernels.averageF16(2).name());
        assertThrows(IllegalArgumentException.class, () -> BuiltinKernels.average(9));
        for (KernelSpec spec : all) {
            assertEquals(spec.style(), spec.compile().style(), spec.name());
        }
    }

    @Test
    void emitAllWritesOneFilePerKernelPlusAModule(@TempDir Path dir) throws Exception {
        List<Path> ptx = KernelSources.emitAll(KernelSources.Target.PTX, dir.resolve("ptx"));
        List<Path> cl = KernelSources.emitAll(KernelSources.Target.parse("opencl"), dir.resolve("cl"));
        assertEquals(BuiltinKernels.all().size() + 1, ptx.size());
        assertEquals(BuiltinKernels.all().size() + 1, cl.size());
        String avg = Files.readString(dir.resolve("ptx/average2.ptx"));
        assertTrue(avg.contains(".entry average2("), avg);
        String module = Files.readString(dir.resolve("cl/gradsync-kernels.cl"));
        for (KernelSpec spec : BuiltinKernels.all()) {
            assertTrue(module.contains("__kernel void k_" + spec.name() + "("), spec.name());
        }
    }

    @Test
    void methodReferencesResolveToTheKernelMethod() throws Exception {
        KernelFunctions.K2<FloatArray, Float> scale = GradientKernels::scale;
        assertEquals(GradientKernels.class.getMethod("scale", FloatArray.class, float.class), MethodReferences.resolve(scale));
        KernelCompiler c = new KernelCompiler();
        CompiledKernel k = c.compile(scale);
        assertSame(k, c.compile(GradientKernels.class.getMethod("scale", FloatArray.class, float.class)));
        KernelFunctions.K1<FloatArray> lambda = x -> x.set(0, 1f);
        assertThrows(IllegalArgumentException.class, () -> MethodReferences.resolve(lambda));
    }
}
