package io.gradsync.tasks.kernels.features;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.testing.Ptxas;
import io.gradsync.tasks.kernels.AverageKernels;
import io.gradsync.tasks.kernels.ConversionKernels;
import io.gradsync.tasks.kernels.ElementwiseKernels;
import io.gradsync.tasks.kernels.ReductionKernels;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The bounds-checked PTX ({@link CompiledKernel#ptxChecked}) of every kernel at hand passes ptxas,
 * with one test per array access of the kernel: users' kernels of every feature (atomics,
 * private, group-local and table arrays, barriers, warp reductions, 16-bit arrays) and the
 * built-ins as if they were users' (skipped, visibly, where ptxas is not installed).
 */
class PtxBoundsChecksAssembleTest {

    @BeforeAll
    static void needPtxas() {
        assumeTrue(Ptxas.available(), "ptxas is not on the PATH: PTX assembly tests skipped");
    }

    static Stream<Method> kernels() {
        return Stream.of(UserKernels.class, AverageKernels.class, ReductionKernels.class, ElementwiseKernels.class, ConversionKernels.class)
                .flatMap(c -> Arrays.stream(c.getDeclaredMethods()))
                .filter(m -> Modifier.isStatic(m.getModifiers()) && m.getReturnType() == void.class && !m.isSynthetic() && compiles(m));
    }

    private static boolean compiles(Method m) {
        try {
            KernelCompiler.shared().compile(m);
            return true;
        } catch (KernelCompileException | IllegalArgumentException e) {
            return false; // helpers, and kernels the compiler refuses on purpose: not kernels here
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kernels")
    void checkedPtxAssemblesWithATestPerAccess(Method m) throws Exception {
        CompiledKernel k = KernelCompiler.shared().compile(m);
        long accesses = KernelIrs.ir(k).blocks().stream().flatMap(b -> b.insns().stream())
                .filter(i -> i instanceof Insn.Load || i instanceof Insn.Store || i instanceof Insn.AtomicAdd || i instanceof Insn.Atomic
                        || i instanceof Insn.ArrayLoad || i instanceof Insn.ArrayStore)
                .count();
        for (int sm : new int[] {75, 90}) {
            String checked = k.ptxChecked(sm, Set.copyOf(k.readOnlyArrays()));
            // atomics and private or local arrays record at once; global loads and stores keep the
            // thread's first fault in registers, recorded where it returns
            long recordedAtOnce = checked.lines().filter(l -> l.trim().matches("atom\\.global\\.cas\\.b32 \\S+, \\[\\S+\\], 0, -?\\d+;")).count();
            long kept = checked.lines().filter(l -> l.trim().matches("setp\\.eq\\.and\\.u32 \\S+, \\S+, 0, !\\S+;")).count();
            long recordedOnReturn = checked.lines().filter(l -> l.trim().matches("@\\S+ atom\\.global\\.cas\\.b32 \\S+, \\[\\S+\\], 0, %r\\d+;")).count();
            long returns = checked.lines().filter(l -> l.trim().equals("ret;")).count() - (checked.contains("$L_exit:") ? 1 : 0);
            assertEquals(accesses, recordedAtOnce + kept, "one test per access, sm_" + sm + ":\n" + checked);
            assertEquals(returns, recordedOnReturn, "a record at each return (threads past a grid exit at once), sm_" + sm + ":\n" + checked);
            Ptxas.assemble(checked, sm);
        }
    }
}
