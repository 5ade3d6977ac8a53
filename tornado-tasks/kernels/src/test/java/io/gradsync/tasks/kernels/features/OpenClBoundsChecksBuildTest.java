package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClRuntime;
import io.gradsync.tasks.opencl.driver.OpenClHandles;
import org.jocl.CL;
import org.jocl.cl_program;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.reflect.Method;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The bounds-checked OpenCL C ({@link CompiledKernel#openClChecked}) of every kernel of
 * {@link PtxBoundsChecksAssembleTest} builds on the first OpenCL device (PoCL in CI; skipped,
 * visibly, where there is none), with one test per array access, each recording its fault at once.
 * (Unlike checked PTX, the access is not predicated with the fault kept until the return: that form
 * ran slower on PoCL, bench/RESULTS.md session 38.)
 */
class OpenClBoundsChecksBuildTest {
    private static OpenClDevice device;

    @BeforeAll
    static void needOpenCl() {
        assumeTrue(OpenClRuntime.status().available() && !OpenClRuntime.devices().isEmpty(), "no OpenCL device: build tests skipped");
        device = OpenClRuntime.devices().getFirst();
    }

    static Stream<Method> kernels() {
        return PtxBoundsChecksAssembleTest.kernels();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kernels")
    void checkedOpenClBuildsWithATestPerAccess(Method m) {
        CompiledKernel k = KernelCompiler.shared().compile(m);
        long accesses = KernelIrs.ir(k).blocks().stream().flatMap(b -> b.insns().stream())
                .filter(i -> i instanceof Insn.Load || i instanceof Insn.Store || i instanceof Insn.AtomicAdd || i instanceof Insn.Atomic
                        || i instanceof Insn.ArrayLoad || i instanceof Insn.ArrayStore)
                .count();
        String checked = k.openClChecked();
        long recorded = checked.substring(checked.indexOf("__kernel")).lines()
                .mapToLong(l -> l.split("gs_oob\\(gs_fault, -?\\d+, ", -1).length - 1).sum();
        assertEquals(accesses, recorded, "a test and a record per access:\n" + checked);
        cl_program built = OpenClHandles.buildProgram(device, checked,
                CompiledKernel.openClBuildOptions(device.correctlyRoundedDivideSqrt(), device.isNvidiaGpu(), device.hasPtxBf16()), k.entryName());
        CL.clReleaseProgram(built);
    }
}
