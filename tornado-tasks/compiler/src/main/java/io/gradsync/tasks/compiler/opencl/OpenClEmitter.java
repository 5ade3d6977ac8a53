package io.gradsync.tasks.compiler.opencl;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.BoundsFaults;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.Cond;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;

import java.util.List;

/**
 * Emits OpenCL C (1.2) for kernels in {@link KernelIr}.
 *
 * <p>Control flow is emitted as labels and {@code goto} between basic blocks: javac's control flow
 * is reducible and every OpenCL C compiler (clang based) accepts {@code goto}, so no structuring
 * pass is needed for correctness; the device compiler rebuilds the loops. Java semantics are kept
 * where C differs: int arithmetic wraps (done in unsigned), shift counts are masked, float to int
 * conversion saturates with NaN to 0, {@code Math.min/max} propagate NaN and order -0 before +0,
 * float compares keep Java's NaN behaviour, fp contraction is off, integer division follows Java
 * at MIN / -1. Float division and sqrt are IEEE when the program is built with
 * {@link #BUILD_OPTIONS_IEEE_DIV_SQRT}, which the OpenCL runtime asks for wherever the device
 * offers it.
 *
 * <p>An element-wise kernel also has a vector form ({@link #vectorProgram}, {@link OpenClVectorForm}),
 * which a launch whose arrays are all aligned runs.
 *
 * <p>Calling convention (OpenCL passes buffers, not pointers): each array parameter becomes three
 * arguments, the buffer ({@code <name>_base}), the element offset of the array in it
 * ({@code <name>_off}, int) and the element count ({@code <name>_len}, int), so a slice of a
 * buffer is passed without sub-buffers; scalars by value; no KernelContext.
 *
 * <p>A {@linkplain #checkedProgram bounds-checked} program (users' kernels: a built-in's accesses
 * are known to lie in its arrays) tests every access against its array's length first, as Java
 * does, and takes one more argument, {@code gs_fault}: the first access out of bounds is recorded
 * there and every such access skipped (a load reads 0), so the device's memory stays intact.
 */
public final class OpenClEmitter {
    /** Build option making f32 division and sqrt correctly rounded, as in Java. */
    public static final String BUILD_OPTIONS_IEEE_DIV_SQRT = "-cl-fp32-correctly-rounded-divide-sqrt";
    /** The build option that gives float atomic adds as PTX instructions, for NVIDIA's OpenCL (which takes inline PTX). */
    public static final String BUILD_OPTION_PTX_ATOMICS = "-D GS_PTX_ATOMICS";
    /**
     * The build option that rounds a double to bf16 with PTX's one {@code cvt.rn.bf16.f64}, for
     * NVIDIA's GPUs from compute capability 9.0 (OpenCL C has no bf16 conversion).
     */
    public static final String BUILD_OPTION_PTX_BF16 = "-D GS_PTX_CVT_BF16";

    /** The last argument of a {@linkplain #checkedProgram bounds-checked} kernel: two ints ({@link BoundsFaults}). */
    public static final String FAULT_ARGUMENT = "gs_fault";

    private final StringBuilder out = new StringBuilder();
    /** Whether every array access is tested against its array's length ({@link #checkedProgram}). */
    private boolean checked;

    private OpenClEmitter() {
    }

    /**
     * A program holding {@code kernel} with every access of an array (a parameter, a private or
     * group-local array, a table) tested against the array's length: one out of bounds is skipped
     * (a load reads 0) and the first one is recorded in the last argument, {@link #FAULT_ARGUMENT},
     * two ints zeroed before the launch ({@link BoundsFaults}).
     */
    public static String checkedProgram(KernelIr kernel, String comment) {
        OpenClEmitter e = new OpenClEmitter();
        e.checked = true;
        return "/* " + comment + " */\n" + OpenClPrelude.forKernels(List.of(kernel)) + FAULT_FUNCTION + '\n' + e.emit(kernel, null);
    }

    /** Records the first access out of bounds (whichever thread wins) and gives the 0 a skipped load reads. */
    private static final String FAULT_FUNCTION = """
            int gs_oob(__global int* fault, int code, int index) {
                if (atomic_cmpxchg(fault, 0, code) == 0) {
                    fault[1] = index;
                }
                return 0;
            }
            """;

    private String guard(ArrayParam a, Operand index) {
        return "((uint)" + val(index) + " < (uint)" + param(a) + "_len)";
    }

    private String guard(MemArray m, Operand index) {
        return "((uint)" + val(index) + " < " + m.length() + "u)";
    }

    private static String outOfBounds(int code, Operand index) {
        return "gs_oob(" + FAULT_ARGUMENT + ", " + code + ", " + val(index) + ")";
    }

    /** {@code access;}, or where checked {@code if (guard) access; else record it;}. */
    private void guarded(String guard, int code, Operand index, String access) {
        if (checked) {
            line("if " + guard + " " + access + "; else " + outOfBounds(code, index) + ";");
        } else {
            line(access + ";");
        }
    }

    /** {@code load}, or where checked {@code guard ? load : 0} (recording the access). */
    private String guardedLoad(String guard, int code, Operand index, String load) {
        return checked ? "(" + guard + " ? " + load + " : " + outOfBounds(code, index) + ")" : load;
    }

    /** A complete OpenCL C program holding the given kernels. */
    public static String program(List<KernelIr> kernels, String comment) {
        StringBuilder b = new StringBuilder("/* ").append(comment).append(" */\n");
        b.append(OpenClPrelude.forKernels(kernels));
        for (KernelIr k : kernels) {
            b.append('\n').append(new OpenClEmitter().emit(k, null));
        }
        return b.toString();
    }

    /**
     * A program holding {@code kernel} in its vectorized form ({@link OpenClVectorForm}):
     * {@code loop} is its element-wise loop, which the vector form must cover.
     */
    public static String vectorProgram(KernelIr kernel, ElementwiseLoop loop, String comment) {
        if (!hasVectorForm(loop)) {
            throw new IllegalArgumentException(kernel.name() + ": a 64-bit array, no OpenCL vector form");
        }
        return "/* " + comment + " */\n" + OpenClPrelude.forKernels(List.of(kernel)) + '\n' + new OpenClEmitter().emit(kernel, loop);
    }

    /** Whether an element-wise loop has an OpenCL vector form: arrays of 16 and 32 bits only. */
    public static boolean hasVectorForm(ElementwiseLoop loop) {
        return OpenClVectorForm.applies(loop);
    }

    // ------------------------------------------------------------------------------------------

    private static String ctype(IrType t) {
        return switch (t) {
            case I32 -> "int";
            case I64 -> "long";
            case F32 -> "float";
            case F64 -> "double";
        };
    }

    /** {@code v<id>_<hint>}: unique by id, the hint (a Java local's name) only for reading. */
    static String name(Var v) {
        StringBuilder b = new StringBuilder("v").append(v.id());
        if (!v.hint().isEmpty()) {
            b.append('_');
            v.hint().chars().forEach(c -> b.append(c < 128 && (Character.isLetterOrDigit(c) || c == '_') ? (char) c : '_'));
        }
        return b.toString();
    }

    /**
     * {@code p<index>_<name>}: a parameter's names. The index keeps them apart from each other,
     * from every other name here and from C's and OpenCL's keywords and built-ins.
     */
    private static String param(KernelParam p) {
        return "p" + p.javaIndex() + "_" + p.name();
    }

    static String ptr(ArrayParam a) {
        return param(a) + "_ptr";
    }

    /** The {@code __kernel}'s name for a kernel entry: prefixed so that no name clashes with OpenCL C's own. */
    public static String kernelName(String entryName) {
        return "k_" + entryName;
    }

    private static String literal(Const c) {
        return switch (c.type()) {
            case I32 -> c.intValue() == Integer.MIN_VALUE ? "(-2147483647-1)" : paren(Integer.toString(c.intValue()));
            case I64 -> c.bits() == Long.MIN_VALUE ? "(-9223372036854775807L-1L)" : paren(c.bits() + "L");
            case F32 -> {
                float f = c.floatValue();
                yield Float.isNaN(f) ? "NAN" : Float.isInfinite(f) ? (f > 0 ? "INFINITY" : "(-INFINITY)") : paren(Float.toString(f) + "f");
            }
            case F64 -> {
                double d = c.doubleValue();
                yield Double.isNaN(d) ? "((double)NAN)" : Double.isInfinite(d) ? (d > 0 ? "((double)INFINITY)" : "((double)-INFINITY)")
                        : paren(Double.toString(d));
            }
        };
    }

    private static String paren(String s) {
        return s.startsWith("-") ? "(" + s + ")" : s;
    }

    static String val(Operand o) {
        return o instanceof Var v ? name(v) : literal((Const) o);
    }

    private String indent = "    ";

    void line(String s) {
        out.append(indent).append(s).append('\n');
    }

    /** Lines written from here on one level deeper ({@code deeper}), or back. */
    void indent(boolean deeper) {
        indent = deeper ? indent + "    " : indent.substring(4);
    }

    private static String label(Block b) {
        return "B" + b.id();
    }

    private boolean contextKernel;

    private String emit(KernelIr k, ElementwiseLoop vector) {
        kernel = k.name();
        contextKernel = k.params().stream().anyMatch(p -> p instanceof KernelParam.ContextParam);
        out.append("/* ").append(k.source()).append(" */\n");
        out.append("__kernel void ").append(kernelName(k.name())).append('(');
        StringBuilder params = new StringBuilder();
        StringBuilder init = new StringBuilder();
        for (KernelParam p : k.params()) {
            switch (p) {
                case ArrayParam a -> {
                    String elem = switch (a.element()) {
                        case F32 -> "float";
                        case F64 -> "double";
                        case I32 -> "int";
                        case I64 -> "long";
                        case F16 -> "half";
                        case BF16 -> "ushort";
                    };
                    String n = param(a);
                    params.append("__global ").append(elem).append("* ").append(n).append("_base, const int ")
                            .append(n).append("_off, const int ").append(n).append("_len, ");
                    init.append("    __global ").append(elem).append("* ").append(ptr(a)).append(" = ")
                            .append(n).append("_base + ").append(n).append("_off;\n");
                }
                case KernelParam.ScalarParam s -> {
                    params.append("const ").append(ctype(s.type())).append(' ').append(param(s)).append(", ");
                    init.append("    ").append(name(s.var())).append(" = ").append(param(s)).append(";\n");
                }
                case KernelParam.ContextParam c -> {
                }
            }
        }
        boolean context = k.params().stream().anyMatch(p -> p instanceof KernelParam.ContextParam);
        if (context) {
            // the caller's grid: get_global_size would count the threads launched to fill whole groups
            params.append("const int gs_global_x, const int gs_global_y, const int gs_global_z, ");
        }
        if (checked) {
            params.append("__global int* ").append(FAULT_ARGUMENT).append(", ");
        }
        if (!params.isEmpty()) {
            params.setLength(params.length() - 2);
        }
        out.append(params).append(") {\n");
        if (k.blocks().stream().flatMap(b -> b.insns().stream()).anyMatch(i -> i instanceof Insn.WarpReduce)) {
            line("__local int gs_warp[" + io.gradsync.tasks.api.WorkerGrid.MAX_GROUP_THREADS + "];");
        }
        for (MemArray m : k.arrays()) {
            String decl = elementType(m) + " " + arrayName(m) + "[" + Math.max(1, m.length()) + "]";
            switch (m.space()) {
                case PRIVATE -> line(decl + ";");
                case GROUP -> line("__local " + decl + ";");
                case TABLE -> {
                    StringBuilder t = new StringBuilder("__constant ").append(m.elementBytes() == 8 ? "ulong " : "uint ")
                            .append(arrayName(m)).append('[').append(Math.max(1, m.length())).append("] = {");
                    for (int i = 0; i < Math.max(1, m.length()); i++) {
                        long bits = i < m.length() ? m.table()[i] : 0;
                        t.append(i > 0 ? ", " : "").append(m.elementBytes() == 8 ? "0x" + Long.toHexString(bits) + "UL" : "0x" + Long.toHexString(bits & 0xffffffffL) + "U");
                    }
                    tables.append(t).append("};\n");
                }
            }
        }
        for (Var v : k.vars()) {
            line(ctype(v.type()) + " " + name(v) + ";");
        }
        out.append(init);
        if (context) {
            line("if (get_global_id(0) >= (size_t)gs_global_x || get_global_id(1) >= (size_t)gs_global_y"
                    + " || get_global_id(2) >= (size_t)gs_global_z) return;");
        }

        if (vector != null) {
            new OpenClVectorForm(this).emit(vector);
            out.append("}\n");
            return tables + out.toString();
        }
        List<Block> blocks = k.blocks();
        for (int i = 0; i < blocks.size(); i++) {
            Block b = blocks.get(i);
            Block next = i + 1 < blocks.size() ? blocks.get(i + 1) : null;
            out.append(label(b)).append(":;\n");
            for (Insn insn : b.insns()) {
                emitInsn(insn);
            }
            emitTerminator(b.terminator(), next);
        }
        out.append("}\n");
        return tables + out.toString();
    }

    /** Program-scope tables of the kernel, emitted before it. */
    private final StringBuilder tables = new StringBuilder();
    private String kernel;
    private int loops;

    /** {@code a<id>} (private), {@code s<id>} (group), {@code t_<kernel>_<id>} (table, at program scope). */
    private String arrayName(MemArray m) {
        return switch (m.space()) {
            case PRIVATE -> "a" + m.id();
            case GROUP -> "s" + m.id();
            case TABLE -> "t_" + kernel + "_" + m.id();
        };
    }

    private static String elementType(MemArray m) {
        return ctype(m.valueType());
    }

    private String memLoad(Insn.ArrayLoad l) {
        MemArray m = l.array();
        String at = arrayName(m) + "[" + val(l.index()) + "]";
        if (m.space() != MemArray.Space.TABLE) {
            return at;
        }
        return switch (m.valueType()) {
            case F32 -> "as_float(" + at + ")";
            case F64 -> "as_double(" + at + ")";
            case I32 -> "as_int(" + at + ")";
            case I64 -> "as_long(" + at + ")";
        };
    }

    /** The value a store to an array of a narrow Java type keeps, as Java's stores truncate it. */
    private static String narrowed(MemArray m, String v) {
        return switch (m.javaType()) {
            case 'B' -> "(int)(char)" + v;
            case 'S' -> "(int)(short)" + v;
            case 'C' -> "(" + v + " & 0xffff)";
            case 'Z' -> "(" + v + " & 1)";
            default -> v;
        };
    }

    /**
     * A warp reduction without subgroup functions (OpenCL C 1.2 has none, NVIDIA's OpenCL offers
     * no extension for them): the group's values through group-local memory, then each thread adds
     * its 32 as the butterfly does (lower lane first), so the bits are PTX's and the JVM's.
     */
    private void emitWarpReduce(Insn.WarpReduce w) {
        boolean f32 = w.value().type() == IrType.F32;
        String t = f32 ? "float" : "int";
        String op = w.max() ? (f32 ? "gs_maxf(p[j], p[j + off])" : "max(p[j], p[j + off])") : "p[j] + p[j + off]";
        if (!f32 && !w.max()) {
            op = "as_int((uint)p[j] + (uint)p[j + off])";
        }
        line("{");
        line("    int l = (int)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));");
        line("    gs_warp[l] = " + (f32 ? "as_int(" + val(w.value()) + ")" : val(w.value())) + ";");
        line("    barrier(CLK_LOCAL_MEM_FENCE);");
        line("    " + t + " p[32];");
        line("    for (int j = 0; j < 32; j++) p[j] = " + (f32 ? "as_float(gs_warp[(l & ~31) + j])" : "gs_warp[(l & ~31) + j]") + ";");
        line("    for (int off = 16; off > 0; off >>= 1) for (int j = 0; j < off; j++) p[j] = " + op + ";");
        line("    " + name(w.dst()) + " = p[0];");
        line("    barrier(CLK_LOCAL_MEM_FENCE);");
        line("}");
    }

    /**
     * An atomic in OpenCL C 1.2: the 32-bit functions, the 64-bit ones of
     * {@code cl_khr_int64_base_atomics} / {@code _extended_atomics}, float through the bits, and
     * the ordering as {@code mem_fence} before a release and after an acquire.
     */
    private void emitAtomic(Insn.Atomic a) {
        IrType t = a.array().element().valueType();
        String p = "&" + ptr(a.array()) + "[" + val(a.index()) + "]";
        boolean release = a.order() == Insn.Order.RELEASE || a.order() == Insn.Order.ACQ_REL || a.order() == Insn.Order.SEQ_CST;
        boolean acquire = a.order() == Insn.Order.ACQUIRE || a.order() == Insn.Order.ACQ_REL || a.order() == Insn.Order.SEQ_CST;
        if (release) {
            line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
        }
        String d = a.dst() == null ? null : name(a.dst());
        String v = a.value() == null ? null : val(a.value());
        String sfx = switch (t) {
            case I32 -> "i";
            case I64 -> "l";
            default -> "f";
        };
        String expr = switch (a.op()) {
            case LOAD -> "gs_atomic_load_" + sfx + "(" + p + ")";
            case STORE -> "gs_atomic_xchg_" + sfx + "(" + p + ", " + v + ")";
            case EXCHANGE -> "gs_atomic_xchg_" + sfx + "(" + p + ", " + v + ")";
            case COMPARE_EXCHANGE -> "gs_atomic_cmpxchg_" + sfx + "(" + p + ", " + val(a.expected()) + ", " + v + ")";
            case ADD -> "gs_atomic_add_" + sfx + "(" + p + ", " + v + ")";
            case MAX -> "gs_atomic_max_" + sfx + "(" + p + ", " + v + ")";
            case MIN -> "gs_atomic_min_" + sfx + "(" + p + ", " + v + ")";
        };
        if (checked) {
            line("if " + guard(a.array(), a.index()) + " " + (d == null ? "" : d + " = ") + expr + ";");
            line("else " + (d == null ? "" : d + " = ") + outOfBounds(BoundsFaults.code(a.array()), a.index()) + ";");
        } else {
            line((d == null ? "" : d + " = ") + expr + ";");
        }
        if (acquire) {
            line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
        }
    }

    private void emitTerminator(Insn.Terminator t, Block next) {
        switch (t) {
            case Insn.Jump j -> {
                if (j.target() != next) {
                    line("goto " + label(j.target()) + ";");
                }
            }
            case Insn.Return r -> line("return;");
            case Insn.Branch br -> {
                String cond = condition(br);
                if (br.ifTrue() == next) {
                    line("if (!" + cond + ") goto " + label(br.ifFalse()) + ";");
                } else {
                    line("if " + cond + " goto " + label(br.ifTrue()) + ";");
                    if (br.ifFalse() != next) {
                        line("goto " + label(br.ifFalse()) + ";");
                    }
                }
            }
        }
    }

    /**
     * An element-wise loop's code before the loop, for its vector form: its instructions, or where
     * it branches its blocks, each with its label and terminator but the last, whose loop test the
     * form's loops replace.
     */
    void emitPrologue(ElementwiseLoop loop) {
        if (!loop.prologueBranches()) {
            loop.prologue().forEach(this::emitInsn);
            return;
        }
        List<Block> blocks = loop.prologueBlocks();
        for (int i = 0; i < blocks.size(); i++) {
            Block b = blocks.get(i);
            out.append(label(b)).append(":;\n");
            b.insns().forEach(this::emitInsn);
            if (i + 1 < blocks.size()) {
                emitTerminator(b.terminator(), blocks.get(i + 1));
            }
        }
    }

    private static String condition(Insn.Branch br) {
        String a = val(br.a());
        String b = val(br.b());
        String op = cOperator(br.cond());
        String plain = "(" + a + " " + op + " " + b + ")";
        if (!br.a().type().isFloat()) {
            return plain;
        }
        boolean cNanResult = br.cond() == Cond.NE;
        if (br.unorderedTaken() == cNanResult) {
            return plain;
        }
        if (br.unorderedTaken()) {
            return "(" + a + " " + op + " " + b + " || isnan(" + a + ") || isnan(" + b + "))";
        }
        return "(" + a + " != " + b + " && !isnan(" + a + ") && !isnan(" + b + "))";
    }

    void emitInsn(Insn insn) {
        switch (insn) {
            case Insn.Move m -> line(name(m.dst()) + " = " + val(m.src()) + ";");
            case Insn.Binary b -> line(name(b.dst()) + " = " + binary(b) + ";");
            case Insn.Unary u -> line(name(u.dst()) + " = " + unary(u) + ";");
            case Insn.Fma f -> line(name(f.dst()) + " = fma(" + val(f.a()) + ", " + val(f.b()) + ", " + val(f.c()) + ");");
            case Insn.Select x -> line(name(x.dst()) + " = (" + val(x.a()) + " " + cOperator(x.cond()) + " " + val(x.b()) + ") ? "
                    + val(x.ifTrue()) + " : " + val(x.ifFalse()) + ";");
            case Insn.Convert c -> line(name(c.dst()) + " = " + convert(c) + ";");
            case Insn.Compare3 c -> {
                String a = val(c.a());
                String b = val(c.b());
                String three = "(" + a + " < " + b + " ? -1 : (" + a + " > " + b + " ? 1 : 0))";
                if (c.a().type().isFloat()) {
                    three = "((isnan(" + a + ") || isnan(" + b + ")) ? " + c.nanResult() + " : " + three + ")";
                }
                line(name(c.dst()) + " = " + three + ";");
            }
            case Insn.Load l -> line(name(l.dst()) + " = "
                    + guardedLoad(guard(l.array(), l.index()), BoundsFaults.code(l.array()), l.index(), load(l)) + ";");
            case Insn.Store s -> guarded(guard(s.array(), s.index()), BoundsFaults.code(s.array()), s.index(), store(s));
            case Insn.AtomicAdd a -> {
                String at = "&" + ptr(a.array()) + "[" + val(a.index()) + "]";
                guarded(guard(a.array(), a.index()), BoundsFaults.code(a.array()), a.index(), a.value().type() == IrType.F32
                        ? "gs_atomic_add_f32(" + at + ", " + val(a.value()) + ")" : "atomic_add(" + at + ", " + val(a.value()) + ")");
            }
            case Insn.ArrayLength l -> line(name(l.dst()) + " = " + param(l.array()) + "_len;");
            case Insn.Thread t -> line(name(t.dst()) + " = (int)" + switch (t.query()) {
                case GLOBAL_IDX -> "get_global_id(" + t.dim() + ")";
                case GLOBAL_SIZE -> contextKernel ? "gs_global_" + "xyz".charAt(t.dim()) : "get_global_size(" + t.dim() + ")";
                case LOCAL_IDX -> "get_local_id(" + t.dim() + ")";
                case GROUP_IDX -> "get_group_id(" + t.dim() + ")";
                case LOCAL_SIZE -> "get_local_size(" + t.dim() + ")";
                case GROUP_COUNT -> "get_num_groups(" + t.dim() + ")";
            } + ";");
            case Insn.ArrayLoad l -> line(name(l.dst()) + " = "
                    + guardedLoad(guard(l.array(), l.index()), BoundsFaults.code(l.array()), l.index(), memLoad(l)) + ";");
            case Insn.ArrayStore st -> guarded(guard(st.array(), st.index()), BoundsFaults.code(st.array()), st.index(),
                    arrayName(st.array()) + "[" + val(st.index()) + "] = " + narrowed(st.array(), val(st.value())));
            case Insn.ArrayZero z -> {
                if (z.array().length() > 0) {
                    String i = "gs_z" + loops++;
                    line("for (int " + i + " = 0; " + i + " < " + z.array().length() + "; " + i + "++) " + arrayName(z.array()) + "[" + i + "] = 0;");
                }
            }
            case Insn.Barrier b -> line("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);");
            case Insn.WarpReduce w -> emitWarpReduce(w);
            case Insn.Atomic a -> emitAtomic(a);
            case Insn.Terminator t -> throw new IllegalStateException("terminator inside a block");
        }
    }

    private static String cOperator(Cond cond) {
        return switch (cond) {
            case EQ -> "==";
            case NE -> "!=";
            case LT -> "<";
            case GE -> ">=";
            case GT -> ">";
            case LE -> "<=";
        };
    }

    private static String binary(Insn.Binary b) {
        IrType t = b.dst().type();
        String a = val(b.a());
        String c = val(b.b());
        if (t.isFloat()) {
            return switch (b.op()) {
                case ADD -> a + " + " + c;
                case SUB -> a + " - " + c;
                case MUL -> a + " * " + c;
                case DIV -> a + " / " + c;
                default -> throw new IllegalStateException(b.op() + " on " + t);
            };
        }
        boolean wide = t == IrType.I64;
        String u = wide ? "(ulong)" : "(uint)";
        String as = wide ? "as_long" : "as_int";
        return switch (b.op()) {
            case ADD -> as + "(" + u + a + " + " + u + c + ")";
            case SUB -> as + "(" + u + a + " - " + u + c + ")";
            case MUL -> as + "(" + u + a + " * " + u + c + ")";
            case DIV -> a + " / " + c; // the divisor is never 0 or -1 here (the lowering), nor is a count out of range
            case REM -> a + " % " + c;
            case AND -> a + " & " + c;
            case OR -> a + " | " + c;
            case XOR -> a + " ^ " + c;
            case SHL -> as + "(" + u + a + " << " + c + ")";
            case SHR -> a + " >> " + c;
            case USHR -> as + "(" + u + a + " >> " + c + ")";
            case MIN -> "min(" + a + ", " + c + ")";
            case MAX -> "max(" + a + ", " + c + ")";
        };
    }

    private static String unary(Insn.Unary u) {
        String a = val(u.a());
        IrType t = u.a().type();
        return switch (u.op()) {
            case NEG -> t.isFloat() ? "-" + a : (t == IrType.I64 ? "as_long(0UL - (ulong)" : "as_int(0u - (uint)") + a + ")";
            case ABS -> {
                if (!t.isFloat()) {
                    throw new IllegalStateException("integer abs reaches the emitter: the lowering writes it out");
                }
                yield "fabs(" + a + ")";
            }
            case SQRT -> "sqrt(" + a + ")";
            case BITCAST -> "as_" + ctype(u.dst().type()) + "(" + a + ")";
            case BF16_BITS_TO_F32 -> "as_float(((uint)" + a + " & 0xffffu) << 16)";
            case F32_TO_BF16_BITS -> "gs_f32_to_bf16(" + a + ")";
            case HALF_BITS_TO_F32 -> "gs_half_to_f32(" + a + ")";
            case F32_TO_HALF_BITS -> "gs_f32_to_half(" + a + ")";
            case F64_TO_F32_ODD -> "gs_round_to_odd(" + a + ")";
        };
    }

    private static String convert(Insn.Convert c) {
        String a = val(c.src());
        return switch (c.op()) {
            case I2L -> "(long)" + a;
            case L2I -> "as_int((uint)" + a + ")";
            case I2F, L2F, D2F -> "(float)" + a;
            case I2D, L2D, F2D -> "(double)" + a;
            case F2I, D2I -> "(int)" + a; // NaN and out-of-range values are selected away by the lowering
            case F2L, D2L -> "(long)" + a;
            case I2B -> "(int)(char)" + a;
            case I2S -> "(int)(short)" + a;
            case I2C -> "(" + a + " & 0xffff)";
        };
    }

    private static String load(Insn.Load l) {
        ArrayParam a = l.array();
        String i = val(l.index());
        ElementKind k = a.element();
        if (l.rawBits()) {
            return "(int)((__global short*)" + ptr(a) + ")[" + i + "]";
        }
        return switch (k) {
            case F16 -> "vload_half(" + i + ", " + ptr(a) + ")";
            case BF16 -> "as_float((uint)" + ptr(a) + "[" + i + "] << 16)";
            default -> ptr(a) + "[" + i + "]";
        };
    }

    private static String store(Insn.Store s) {
        ArrayParam a = s.array();
        String i = val(s.index());
        String v = val(s.value());
        if (s.rawBits()) {
            return "((__global short*)" + ptr(a) + ")[" + i + "] = (short)" + v;
        }
        boolean fromDouble = s.value().type() == IrType.F64; // folded into the store (SingleRounding)
        return switch (a.element()) {
            case F16 -> "vstore_half_rte(" + v + ", " + i + ", " + ptr(a) + ")"; // from a float, or once from a double
            case BF16 -> ptr(a) + "[" + i + "] = (ushort)" + (fromDouble ? "gs_f64_to_bf16(" : "gs_f32_to_bf16(") + v + ")";
            default -> ptr(a) + "[" + i + "] = " + v;
        };
    }
}
