package io.gradsync.tasks.compiler.ir;

import io.gradsync.tasks.compiler.CompiledKernel;
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
    }

    private static volatile Access access;

    private KernelIrs() {
    }

    /** Called once, by {@code CompiledKernel}. */
    public static synchronized void install(Access implementation) {
        if (access != null) {
            throw new IllegalStateException("kernel IR access is installed already");
        }
        access = implementation;
    }

    /** The kernel's typed IR. */
    public static KernelIr ir(CompiledKernel kernel) {
        return access().ir(kernel);
    }

    /** Java parameters in order and what each becomes on the device. */
    public static List<KernelParam> parameters(CompiledKernel kernel) {
        return access().ir(kernel).params();
    }

    /** The element-wise analysis, where the kernel is an element-wise loop. */
    public static Optional<ElementwiseLoop> elementwiseLoop(CompiledKernel kernel) {
        return access().elementwiseLoop(kernel);
    }

    private static Access access() {
        Access a = access;
        if (a == null) {
            try { // CompiledKernel installs it in its static initializer
                Class.forName(CompiledKernel.class.getName(), true, CompiledKernel.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = access;
        }
        return a;
    }
}
