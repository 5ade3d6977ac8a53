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
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The bounds-checked OpenCL C ({@link CompiledKernel#openClChecked}) of every kernel of
 * {@link PtxBoundsChecksAssembleTest} builds on the first OpenCL device (PoCL in CI; skipped,
 * visibly, where there is none), with one test per array access: a parameter array's load or store
 * keeps the thread's first fault in private variables, recorded at each return; atomics and the
 * kernel's own arrays record at once.
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
        List<Insn> insns = KernelIrs.ir(k).blocks().stream().flatMap(b -> b.insns().stream()).toList();
        long global = insns.stream().filter(i -> i instanceof Insn.Load || i instanceof Insn.Store).count();
        long others = insns.stream().filter(i -> i instanceof Insn.AtomicAdd || i instanceof Insn.Atomic
                || i instanceof Insn.ArrayLoad || i instanceof Insn.ArrayStore).count();
        String checked = k.openClChecked();
        List<String> body = checked.substring(checked.indexOf("__kernel")).lines().map(String::trim).toList();
        long kept = body.stream().filter(l -> l.startsWith("if (!gs_ok && gs_fc == 0) { gs_fc = ")).count();
        long recordedAtReturn = body.stream().filter(l -> l.equals("if (gs_fc != 0) gs_oob(gs_fault, gs_fc, gs_fi);")).count();
        long recordedAtOnce = body.stream().mapToLong(l -> l.split("gs_oob\\(gs_fault, -?\\d+, ", -1).length - 1).sum();
        long returns = body.stream().filter(l -> l.equals("return;")).count();
        assertEquals(global, kept, "a kept fault per load or store of a parameter array:\n" + checked);
        assertEquals(others, recordedAtOnce, "an immediate record per atomic or own array's access:\n" + checked);
        assertEquals(returns, recordedAtReturn, "a record before each return:\n" + checked);
        cl_program built = OpenClHandles.buildProgram(device, checked,
                CompiledKernel.openClBuildOptions(device.correctlyRoundedDivideSqrt(), device.isNvidiaGpu(), device.hasPtxBf16()), k.entryName());
        CL.clReleaseProgram(built);
    }
}
