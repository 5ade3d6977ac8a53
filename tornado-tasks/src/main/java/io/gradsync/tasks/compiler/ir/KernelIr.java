package io.gradsync.tasks.compiler.ir;

import java.util.List;

/**
 * A kernel after translation from bytecode, with every static call inlined.
 *
 * @param name        entry-point name on the device (derived from the Java method name)
 * @param source      {@code Class.method(descriptor)} the kernel came from, for comments and errors
 * @param params      the Java parameters in order (see {@link KernelParam} for the calling convention)
 * @param blocks      basic blocks, entry first, in emission order
 * @param vars        every variable the blocks use
 * @param writtenArrays names of array parameters the kernel stores into (the others are read-only)
 */
public record KernelIr(String name, String source, List<KernelParam> params, List<Block> blocks,
                       List<Var> vars, java.util.Set<String> writtenArrays) {

    public boolean usesF64() {
        return vars.stream().anyMatch(v -> v.type() == IrType.F64)
                || params.stream().anyMatch(p -> p instanceof KernelParam.ArrayParam a && a.element() == ElementKind.F64);
    }
}
