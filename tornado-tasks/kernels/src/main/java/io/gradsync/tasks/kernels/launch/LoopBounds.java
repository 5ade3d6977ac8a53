package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import io.gradsync.tasks.compiler.optimize.IndexBound;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The bound of an element-wise loop ({@link ElementwiseLoop}: indices from 0 up to the bound, every
 * array access at the index) where it is a scalar argument: what the launchers and the task graphs
 * read to know, before a launch, how far the loop reaches into its arrays.
 *
 * <p>Thread-safety: stateless.
 */
public final class LoopBounds {
    private LoopBounds() {
    }

    /** A scalar-bounded loop's parameter and the bound's value for one launch. */
    public record ScalarBound(String parameter, long value) {
    }

    /**
     * The bound of {@code kernel}'s element-wise loop for a launch with {@code args} (as the launch
     * takes them, the KernelContext left out), where the bound is a scalar parameter that the
     * kernel never assigns: its value as the kernel sees it (an int parameter gets the argument's
     * low 32 bits). Empty where the kernel is not such a loop or the argument is not a number.
     */
    public static Optional<ScalarBound> scalarBound(CompiledKernel kernel, Object[] args) {
        ElementwiseLoop loop = KernelIrs.elementwiseLoop(kernel).orElse(null);
        if (loop == null || loop.boundScalar().isEmpty()) {
            return Optional.empty();
        }
        String name = loop.boundScalar().get();
        int a = 0;
        for (KernelParam p : KernelIrs.parameters(kernel)) {
            if (p instanceof KernelParam.ContextParam) {
                continue;
            }
            if (p instanceof KernelParam.ScalarParam s && s.name().equals(name) && a < args.length
                    && (args[a] instanceof Number || args[a] instanceof Character)) {
                Number given = ScalarArgument.of(kernel, p, args[a]);
                OptionalLong value = switch (s.type()) {
                    case I32 -> OptionalLong.of(given.intValue());
                    case I64 -> OptionalLong.of(given.longValue());
                    default -> OptionalLong.empty();
                };
                return value.isPresent() ? Optional.of(new ScalarBound(name, value.getAsLong())) : Optional.empty();
            }
            a++;
        }
        return Optional.empty();
    }

    /**
     * The scalar parameter {@code kernel} bounds its global index by ({@code i < n} in a
     * {@code @Parallel} loop or a {@code KernelContext} kernel), whatever else it does: where a
     * caller passes the element count. Empty where there is none ({@link IndexBound}).
     */
    public static Optional<String> indexParameter(CompiledKernel kernel) {
        return IndexBound.scalar(KernelIrs.ir(kernel));
    }
}
