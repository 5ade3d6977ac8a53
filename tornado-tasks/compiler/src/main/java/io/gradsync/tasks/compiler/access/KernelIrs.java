package io.gradsync.tasks.compiler.access;

import io.gradsync.tasks.internal.Installed;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.optimize.AdjacentLoads;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import java.util.List;
import java.util.Optional;

/**
 * The IR behind a {@link CompiledKernel}, for gradsync's own launchers, emitters and tools: the IR
 * is not part of the exported API (this package is not exported), so it can change freely.
 * {@code CompiledKernel} installs the access when it loads.
 */
public final class KernelIrs {
    /** What {@code CompiledKernel} lets the rest of gradsync reach. */
    public interface Access {
        KernelIr ir(CompiledKernel kernel);

        Optional<ElementwiseLoop> elementwiseLoop(CompiledKernel kernel);

        AdjacentLoads adjacentLoads(CompiledKernel kernel);
    }

    private static final Installed<Access> ACCESS = new Installed<>("kernel IR", CompiledKernel.class);

    private KernelIrs() {
    }

    /** Called once, by {@code CompiledKernel}. */
    public static void install(Access implementation) {
        ACCESS.install(implementation);
    }

    /** The kernel's typed IR. */
    public static KernelIr ir(CompiledKernel kernel) {
        return ACCESS.get().ir(kernel);
    }

    /** Java parameters in order and what each becomes on the device. */
    public static List<KernelParam> parameters(CompiledKernel kernel) {
        return ACCESS.get().ir(kernel).params();
    }

    /** The element-wise analysis, where the kernel is an element-wise loop. */
    public static Optional<ElementwiseLoop> elementwiseLoop(CompiledKernel kernel) {
        return ACCESS.get().elementwiseLoop(kernel);
    }

    /** Outside an element-wise loop: the loads the kernel's vector form merges (none inside one). */
    public static AdjacentLoads adjacentLoads(CompiledKernel kernel) {
        return ACCESS.get().adjacentLoads(kernel);
    }
}
