package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.KernelFunctions;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.MethodReferences;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

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
                assertTrue(BuiltinKernels.byName("averageInPlace" + k + suffix).isPresent(), "averageInPlace" + k + suffix);
            }
        }
        for (String name : new String[]{"sumInto", "scale", "bf16ToF32", "f32ToBf16", "f16ToF32", "f32ToF16", "checkFinite", "sumOfSquares", "sumOfSquaresPartials", "sumOfSquaresPartialsBf16", "sumPartials", "copy", "copyBf16", "copyF16"}) {
            assertTrue(BuiltinKernels.byName(name).isPresent(), name);
        }
        assertEquals(65, all.size());
        assertEquals(KernelStyle.CONTEXT, BuiltinKernels.byName("sumOfSquares").orElseThrow().style());
        assertEquals(KernelStyle.PARALLEL_LOOP, BuiltinKernels.average(4).style());
        assertEquals("average8Bf16", BuiltinKernels.averageBf16(8).name());
        assertEquals("average2F16", BuiltinKernels.averageF16(2).name());
        assertThrows(IllegalArgumentException.class, () -> BuiltinKernels.average(9));
        for (KernelSpec spec : all) {
            assertEquals(spec.style(), spec.compile().style(), spec.name());
        }
    }

    /** Every built-in kernel sits in its family's class and lists its forms; its CUDA C reference is in the family's file. */
    @Test
    void everyBuiltinKernelListsItsForms() {
        Pattern macroMade = Pattern.compile("(copy|sumInto|scale|checkFinite|sumOfSquaresPartials|sumOfSquares|average[2-8]|averageInPlace[2-8])(Bf16|F16)?");
        for (KernelSpec spec : BuiltinKernels.all()) {
            KernelFamily family = spec.family().orElseThrow();
            assertSame(family.kernelClass(), spec.method().getDeclaringClass(), spec.name());
            Set<KernelSpec.Form> forms = spec.forms();
            assertTrue(forms.containsAll(EnumSet.of(KernelSpec.Form.JAVA, KernelSpec.Form.DEVICE, KernelSpec.Form.CUDA_REFERENCE)), spec.name() + ": " + forms);
            assertEquals(spec.jvmFastForm().isPresent(), forms.contains(KernelSpec.Form.JVM_FAST), spec.name());
            KernelSpec.CudaReference ref = spec.cudaReference().orElseThrow();
            assertEquals(spec.name(), ref.name());
            // written out, or made by one of the family's macros from a stem and a suffix
            boolean defined = ref.source().contains("__global__ void " + ref.name() + "(")
                    || macroMade.matcher(ref.name()).matches() && ref.source().contains("__global__ void "
                    + ref.name().replaceAll("(Bf16|F16)$", "").replaceAll("^average(InPlace)?[2-8]$", "average$1##K") + "##SUF(");
            assertTrue(defined, spec.name() + " in " + family.cudaFile());
        }
        assertTrue(KernelFamily.cudaCommon().contains("#define GS_LOOP"), "the shared CUDA C");
    }

    /** A user's kernel has its Java method and its device form, nothing else. */
    @Test
    void aUsersKernelHasNoBuiltInForms() throws Exception {
        KernelSpec user = new KernelSpec("twice", KernelSourcesTest.class.getDeclaredMethod("twice", FloatArray.class), KernelStyle.PARALLEL_LOOP, 0);
        assertEquals(EnumSet.of(KernelSpec.Form.JAVA, KernelSpec.Form.DEVICE), user.forms());
        assertTrue(user.family().isEmpty() && user.jvmFastForm().isEmpty() && user.cudaReference().isEmpty());
    }

    public static void twice(FloatArray x) {
        for (@Parallel int i = 0; i < x.getSize(); i++) {
            x.set(i, 2 * x.get(i));
        }
    }

    @Test
    void emitAllWritesOneFilePerKernelPlusAModule(@TempDir Path dir) throws Exception {
        List<Path> ptx = KernelSources.emitAll(KernelSources.Target.PTX, dir.resolve("ptx"));
        List<Path> cl = KernelSources.emitAll(KernelSources.Target.parse("opencl"), dir.resolve("cl"));
        long elementwise = BuiltinKernels.all().stream().filter(k -> k.compile().isElementwise()).count();
        assertTrue(elementwise >= 30, "averages, conversions, copies, scale, sumInto: " + elementwise);
        long merged = BuiltinKernels.all().stream().filter(k -> !k.compile().isElementwise() && k.compile().hasVectorForm()).count();
        assertEquals(6, merged, "the 16-bit reductions, whose PTX vector form merges adjacent loads");
        assertEquals(BuiltinKernels.all().size() + elementwise + merged + 1, ptx.size());
        assertEquals(BuiltinKernels.all().size() + elementwise + 1, cl.size());
        assertTrue(Files.readString(dir.resolve("ptx/sumOfSquaresBf16.vector.ptx")).contains("ld.global.v4.b16"));
        assertTrue(Files.readString(dir.resolve("ptx/average2Bf16.vector.ptx")).contains("ld.global.v4.b32"));
        assertTrue(Files.readString(dir.resolve("cl/average2Bf16.vector.cl")).contains("(__global const uint4*)"));
        String avg = Files.readString(dir.resolve("ptx/average2.ptx"));
        assertTrue(avg.contains(".entry average2("), avg);
        String module = Files.readString(dir.resolve("cl/gradsync-kernels.cl"));
        for (KernelSpec spec : BuiltinKernels.all()) {
            assertTrue(module.contains("__kernel void k_" + spec.name() + "("), spec.name());
        }
    }

    @Test
    void methodReferencesResolveToTheKernelMethod() throws Exception {
        KernelFunctions.K2<FloatArray, Float> scale = ElementwiseKernels::scale;
        assertEquals(ElementwiseKernels.class.getMethod("scale", FloatArray.class, float.class), MethodReferences.resolve(scale));
        KernelCompiler c = new KernelCompiler();
        CompiledKernel k = c.compile(scale);
        assertSame(k, c.compile(ElementwiseKernels.class.getMethod("scale", FloatArray.class, float.class)));
        KernelFunctions.K1<FloatArray> lambda = x -> x.set(0, 1f);
        assertThrows(IllegalArgumentException.class, () -> MethodReferences.resolve(lambda));
    }
}
