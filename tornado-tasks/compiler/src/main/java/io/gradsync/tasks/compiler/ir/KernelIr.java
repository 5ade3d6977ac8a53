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
 * @param writtenArrays names of array parameters the kernel writes ({@link Insn.Store},
 *                      {@link Insn.AtomicAdd} or an {@link Insn.Atomic} other than a load); the others are read-only
 * @param arrays        the arrays that live in the kernel (private, group-local, tables)
 */
public record KernelIr(String name, String source, List<KernelParam> params, List<Block> blocks,
                       List<Var> vars, Set<String> writtenArrays, List<MemArray> arrays) {

    public KernelIr(String name, String source, List<KernelParam> params, List<Block> blocks, List<Var> vars, Set<String> writtenArrays) {
        this(name, source, params, blocks, vars, writtenArrays, List.of());
    }

    /**
     * Checks {@code writtenArrays} against the blocks: a back end may load the arrays outside it
     * through a non-coherent cache, so a missing name would be a silent wrong result, not a
     * slow kernel. (It may name more, e.g. an array stored only in code found unreachable.)
     */
    public KernelIr {
        writtenArrays = Set.copyOf(writtenArrays);
        arrays = List.copyOf(arrays);
        for (Block b : blocks) {
            for (Insn insn : b.insns()) {
                String written = switch (insn) {
                    case Insn.Store s -> s.array().name();
                    case Insn.AtomicAdd a -> a.array().name();
                    case Insn.Atomic a -> a.op() == Insn.AtomicOp.LOAD ? null : a.array().name();
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

    /** Whether threads of a group wait for each other (then every thread of a launch must run to the end). */
    public boolean usesBarrier() {
        return blocks.stream().flatMap(b -> b.insns().stream()).anyMatch(i -> i instanceof Insn.Barrier || i instanceof Insn.WarpReduce);
    }

    /** Whether the kernel reduces over warps of 32 threads. */
    public boolean usesWarps() {
        return blocks.stream().flatMap(b -> b.insns().stream()).anyMatch(i -> i instanceof Insn.WarpReduce);
    }

    public boolean usesF64() {
        return vars.stream().anyMatch(v -> v.type() == IrType.F64)
                || params.stream().anyMatch(p -> p instanceof KernelParam.ArrayParam a && a.element() == ElementKind.F64)
                || arrays.stream().anyMatch(a -> a.valueType() == IrType.F64);
    }
}
