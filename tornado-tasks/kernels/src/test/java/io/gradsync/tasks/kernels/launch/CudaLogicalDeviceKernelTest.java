package io.gradsync.tasks.kernels.launch;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.kernels.BuiltinKernels;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Logical devices on one GPU share its loaded kernels. Needs one CUDA GPU. */
@Tag("gpu")
class CudaLogicalDeviceKernelTest {
    @Test
    void kernelsAreLoadedOncePerGpu() {
        assumeTrue(CudaRuntime.status().available(), () -> "CUDA unavailable: " + CudaRuntime.status().detail());
        List<CudaDevice> l = CudaRuntime.logicalDevices(3, 1);
        // every handle on the GPU gets the same function, usable on its own streams
        CompiledKernel average = BuiltinKernels.byName("average2").orElseThrow().compile();
        assertSame(CudaKernels.function(l.get(0), average), CudaKernels.function(l.get(2), average));
    }
}
