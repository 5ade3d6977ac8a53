package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelFamily;
import io.gradsync.tasks.kernels.KernelSpec;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The CUDA C reference covers every built-in kernel, under the same name; nvcc builds it where present. */
class NvccReferenceTest {

    @Test
    void referenceSourceDefinesEveryBuiltinKernel() {
        String source = NvccReference.source();
        assertTrue(source.startsWith(KernelFamily.cudaCommon()), "the shared part first");
        for (KernelSpec k : BuiltinKernels.all()) {
            assertTrue(k.forms().contains(KernelSpec.Form.CUDA_REFERENCE), k.name() + " has no CUDA C reference");
            KernelSpec.CudaReference ref = k.cudaReference().orElseThrow();
            assertTrue(source.contains(ref.source()), ref.name() + ": " + ref.family().cudaFile() + " in the nvcc source");
            // written out, or made by one of its family's macros (ELEMENTWISE, REDUCTIONS, AVERAGE, AVERAGE_IN_PLACE) from a stem and suffix
            boolean direct = Pattern.compile("__global__ void " + ref.name() + "\\(").matcher(ref.source()).find();
            boolean viaMacro = Pattern.compile("^(copy|sumInto|scale|checkFinite|sumOfSquaresPartials|sumOfSquares|average[2-8]|averageInPlace[2-8])(Bf16|F16)?$")
                    .matcher(ref.name()).matches();
            assertTrue(direct || viaMacro, ref.name() + " has no CUDA C reference in " + ref.family().cudaFile());
        }
    }

    @Test
    void nvccBuildsACubinWithEveryKernel() {
        Optional<NvccReference> nvcc = NvccReference.find();
        assumeTrue(nvcc.isPresent(), "nvcc not on the PATH");
        byte[] cubin = nvcc.get().cubin(90);
        String symbols = new String(cubin, StandardCharsets.ISO_8859_1);
        for (KernelSpec k : BuiltinKernels.all()) {
            String name = k.cudaReference().orElseThrow().name();
            assertTrue(symbols.contains(".text." + name + "\0"), name + " in the sm_90 cubin");
        }
    }
}
