package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.kernels.BuiltinKernels;
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
        for (KernelSpec k : BuiltinKernels.all()) {
            String name = k.name();
            // written out, or made by one of the macros (ELEMENTWISE, AVERAGE) from a stem and suffix
            boolean direct = Pattern.compile("__global__ void " + name + "\\(").matcher(source).find();
            boolean viaMacro = Pattern.compile("^(copy|sumInto|scale|checkFinite|sumOfSquaresPartials|sumOfSquares|average[2-8])(Bf16|F16)?$")
                    .matcher(name).matches();
            assertTrue(direct || viaMacro, name + " has no CUDA C reference");
        }
    }

    @Test
    void nvccBuildsACubinWithEveryKernel() {
        Optional<NvccReference> nvcc = NvccReference.find();
        assumeTrue(nvcc.isPresent(), "nvcc not on the PATH");
        byte[] cubin = nvcc.get().cubin(90);
        String symbols = new String(cubin, StandardCharsets.ISO_8859_1);
        for (KernelSpec k : BuiltinKernels.all()) {
            assertTrue(symbols.contains(".text." + k.name() + "\0"), k.name() + " in the sm_90 cubin");
        }
    }
}
