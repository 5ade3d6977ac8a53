package io.gradsync.tasks.compiler.ir;

import java.util.List;
import java.util.Set;

/**
 * A kernel after translation from bytecode, with every static call inlined.
 *
 * @param name          entry-point name on the device (derived from the Java method name)
 * @param source        {@code Class.method(descriptor)} the kernel came from, for comments and errors
 * @param params        the Java parameters in order (see {@link KernelParam} for the calling convention)
 * @param blocks        basic blocks, entry first, in emission order
 * @param vars          every variable the blocks use
 * @param writtenArrays names of array parameters the kernel writes ({@link Insn.Store} or
 *                      {@link Insn.AtomicAdd}); the others are read-only
 */
public record KernelIr(String name, String source, List<KernelParam> params, List<Block> blocks,
                       List<Var> vars, Set<String> writtenArrays) {

    /**
     * Checks {@code writtenArrays} against the blocks: a back end may load the arrays outside it
     * through a non-coherent cache, so a missing name would be a silent wrong result, not a
     * slow kernel. (It may name more, e.g. an array stored only in code found unreachable.)
     */
    public KernelIr {
        writtenArrays = Set.copyOf(writtenArrays);
        for (Block b : blocks) {
            for (Insn insn : b.insns()) {
                String written = switch (insn) {
                    case Insn.Store s -> s.array().name();
                    case Insn.AtomicAdd a -> a.array().name();
                    default -> null;
                };
                if (written != null && !writtenArrays.contains(written)) {
                    throw new IllegalArgumentException(name + ": array " + written + " is written but not listed in writtenArrays " + writtenArrays);
                }
            }
        }
    }

    /** The array parameters in Java parameter order. */
    public List<KernelParam.ArrayParam> arrayParams() {
        return params.stream().filter(p -> p instanceof KernelParam.ArrayParam)
                .map(p -> (KernelParam.ArrayParam) p).toList();
    }

    /** True when the kernel stores into (or atomically adds to) the array parameter {@code name}. */
    public boolean writes(String name) {
        return writtenArrays.contains(name);
    }

    public boolean usesF64() {
        return vars.stream().anyMatch(v -> v.type() == IrType.F64)
                || params.stream().anyMatch(p -> p instanceof KernelParam.ArrayParam a && a.element() == ElementKind.F64);
    }
}
