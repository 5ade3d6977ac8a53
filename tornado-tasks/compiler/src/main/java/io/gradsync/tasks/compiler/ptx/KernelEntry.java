package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.optimize.AdjacentLoads;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.MemArray;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One kernel's {@code .entry}: the parameters and their loads, the early exit of threads past a
 * KernelContext kernel's grid, the in-kernel arrays' declarations, then the body (the blocks in
 * order through {@link ScalarEmitter}, or the {@link VectorForm}) and the register declarations.
 * One instance per entry; it wires the emitter's parts to one {@link PtxWriter}.
 */
final class KernelEntry extends PtxPart {
    private final KernelIr kernel;
    /** The element-wise loop to vectorize, or null for the scalar form. */
    private final ElementwiseLoop vector;
    private final AdjacentLoads merged;
    /** Declarations before the entry: the kernel's tables. */
    private final StringBuilder moduleScope = new StringBuilder();
    private final Addresses addresses;
    private final ScalarEmitter scalar;
    private final VectorForm vectorForm;
    private final boolean checked;

    /**
     * @param vector  the element-wise loop to vectorize, or null
     * @param merged  loads to merge into vector loads (outside an element-wise loop), or {@link AdjacentLoads#NONE}
     * @param checked every array access tested against its array's length, a record of the first one out of bounds the last parameter
     */
    KernelEntry(KernelIr kernel, int sm, Set<String> nonCoherent, ElementwiseLoop vector, AdjacentLoads merged, boolean checked) {
        super(new PtxWriter());
        this.checked = checked;
        this.kernel = kernel;
        this.vector = vector;
        this.merged = merged;
        this.addresses = new Addresses(w, kernel.name());
        FloatSemantics floats = new FloatSemantics(w, sm);
        this.scalar = new ScalarEmitter(w, addresses, floats, nonCoherent, merged);
        this.vectorForm = new VectorForm(w, addresses, scalar, floats);
    }

    private static boolean hasContext(KernelIr k) {
        return k.params().stream().anyMatch(p -> p instanceof KernelParam.ContextParam);
    }

    /** The {@code .entry}: the kernel's tables at module scope first, then its signature, registers and body. */
    String emit() {
        KernelIr k = kernel;
        String name = k.name();
        StringBuilder sig = new StringBuilder();
        sig.append("// ").append(k.source()).append('\n');
        sig.append(".visible .entry ").append(name).append("(\n");
        StringBuilder params = new StringBuilder();
        for (KernelParam p : k.params()) {
            switch (p) {
                case ArrayParam a -> {
                    String ptr = paramName(name, a) + "_ptr";
                    String len = paramName(name, a) + "_len";
                    // the vector form may only run on arrays aligned to their vector access: say so to ptxas
                    int align = vector != null && vector.accessedArrays().contains(a.name()) ? vector.accessBytes(a) : merged.accessBytes(a);
                    params.append("\t.param .u64 .ptr .global .align ").append(align).append(' ').append(ptr).append(",\n");
                    params.append("\t.param .u32 ").append(len).append(",\n");
                    String raw = fresh(RegClass.B64);
                    String base = fresh(RegClass.B64);
                    line("ld.param.u64 " + raw + ", [" + ptr + "]");
                    line("cvta.to.global.u64 " + base + ", " + raw);
                    String l = fresh(RegClass.B32);
                    line("ld.param.u32 " + l + ", [" + len + "]");
                    addresses.bind(a, base, l);
                }
                case KernelParam.ScalarParam s -> {
                    String pn = paramName(name, s);
                    String t = switch (s.type()) {
                        case I32 -> "u32";
                        case I64 -> "u64";
                        case F32 -> "f32";
                        case F64 -> "f64";
                    };
                    params.append("\t.param .").append(t).append(' ').append(pn).append(",\n");
                    line("ld.param." + t + " " + reg(s.var()) + ", [" + pn + "]");
                }
                case KernelParam.ContextParam c -> {
                    // implicit: thread coordinates come from special registers
                }
            }
        }
        if (hasContext(k)) {
            // the caller's grid: globalSize() is exactly it, and threads launched past it return at once
            String[] axis = {"x", "y", "z"};
            for (int d = 0; d < 3; d++) {
                String pn = name + "_global_" + axis[d];
                params.append("\t.param .u32 ").append(pn).append(",\n");
                scalar.globalSizeRegs[d] = fresh(RegClass.B32);
                line("ld.param.u32 " + scalar.globalSizeRegs[d] + ", [" + pn + "]");
            }
            String outside = fresh(RegClass.PRED);
            for (int d = 0; d < 3; d++) {
                String id = scalar.globalId(d);
                String past = fresh(RegClass.PRED);
                line("setp.ge.u32 " + past + ", " + id + ", " + scalar.globalSizeRegs[d]);
                line((d == 0 ? "mov.pred " + outside + ", " + past : "or.pred " + outside + ", " + outside + ", " + past));
            }
            line("@" + outside + " bra $L_exit");
        }
        if (checked) {
            String pn = name + "_fault";
            params.append("\t.param .u64 .ptr .global .align 4 ").append(pn).append(",\n");
            String raw = fresh(RegClass.B64);
            scalar.faultRecord = fresh(RegClass.B64);
            line("ld.param.u64 " + raw + ", [" + pn + "]");
            line("cvta.to.global.u64 " + scalar.faultRecord + ", " + raw);
            scalar.startFaults();
        }
        if (!params.isEmpty()) {
            params.setLength(params.length() - 2);
            params.append('\n');
        }
        sig.append(params).append(")\n{\n");
        for (MemArray m : k.arrays()) {
            String type = m.elementBytes() == 8 ? ".b64" : ".b32";
            switch (m.space()) {
                case PRIVATE -> sig.append("\t.local .align 8 ").append(type).append(' ').append(addresses.name(m)).append('[').append(Math.max(1, m.length())).append("];\n");
                case GROUP -> sig.append("\t.shared .align 8 ").append(type).append(' ').append(addresses.name(m)).append('[').append(Math.max(1, m.length())).append("];\n");
                case TABLE -> {
                    StringBuilder t = new StringBuilder(".const .align 8 ").append(type).append(' ').append(addresses.name(m))
                            .append('[').append(Math.max(1, m.length())).append("] = {");
                    for (int i = 0; i < Math.max(1, m.length()); i++) {
                        long bits = i < m.length() ? m.table()[i] : 0;
                        t.append(i > 0 ? ", " : "").append(String.format(Locale.ROOT, m.elementBytes() == 8 ? "0x%016X" : "0x%08X",
                                m.elementBytes() == 8 ? bits : bits & 0xffffffffL));
                    }
                    moduleScope.append(t).append("};\n");
                }
            }
        }

        if (vector != null) {
            vectorForm.emit(vector);
        } else {
            List<Block> blocks = k.blocks();
            for (int i = 0; i < blocks.size(); i++) {
                Block b = blocks.get(i);
                Block next = i + 1 < blocks.size() ? blocks.get(i + 1) : null;
                w.label(blockLabel(b));
                addresses.startBlock();
                for (Insn insn : b.insns()) {
                    scalar.emitInsn(insn);
                    addresses.noteIndexOffset(insn);
                }
                scalar.emitTerminator(b.terminator(), next);
            }
        }
        if (hasContext(k)) {
            w.label("$L_exit");
            line("ret");
        }
        w.raw("}\n");

        return moduleScope + sig.toString() + w.registerDeclarations() + "\n" + w.text();
    }

    /**
     * {@code <kernel>_p<index>_<name>}: a parameter's {@code .param} name, the index keeping it
     * apart from every other parameter's.
     */
    private static String paramName(String kernel, KernelParam p) {
        return kernel + "_p" + p.javaIndex() + "_" + p.name();
    }
}
