package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.ElementwiseLoop;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Emits PTX for kernels in {@link KernelIr}.
 *
 * <p>Every IR variable becomes a virtual register; ptxas does the real register allocation and
 * the optimisation, so this emitter stays a direct mapping. Choices that matter:
 * <ul>
 *   <li>Floating-point arithmetic carries explicit {@code .rn} rounding, which gives Java's IEEE
 *       results and stops ptxas from contracting a multiply and an add into an fma (Java does not).
 *       Denormals are kept (no {@code .ftz}).</li>
 *   <li>Addresses are 64-bit: {@code mul.wide.s32} of the int index by the element size added to
 *       the array's base pointer, the same sequence nvcc emits. An index that the block computed
 *       as another int plus a constant (0 to 2^24) takes that int's address with the constant as
 *       the immediate offset, so that {@code x[i]}, {@code x[i + 1]}, ... share one address: the two
 *       differ only where {@code i + c} overflows, an index out of range either way.</li>
 *   <li>Loads are plain {@code ld.global} unless the caller names the array as non-coherent
 *       ({@link #entry(KernelIr, int, Set)}): then {@code ld.global.nc}, the read-only data
 *       cache path nvcc takes for a {@code const T* __restrict__} argument. That cache is not kept
 *       coherent with stores made during the kernel, so {@code .nc} is only correct for memory
 *       that nothing writes while the kernel runs. The kernel itself cannot write the array (an
 *       array it writes is refused), but the same memory may also be passed as a written
 *       argument (an in-place average, {@code out} and {@code a0} one buffer), which the PTX
 *       cannot know: only the runtime, seeing the actual addresses, may choose the set
 *       ({@code CudaKernels.prepare} does, per launch). With the empty set (the default) no load
 *       is {@code .nc}.</li>
 *   <li>An element-wise kernel ({@link ElementwiseLoop}) has a second, vectorized form
 *       ({@link #entry(KernelIr, int, Set, boolean)}): each thread takes groups of
 *       {@code width} consecutive elements, so every array moves 8 or 16 bytes per access
 *       ({@code ld/st.global.v2/.v4}) instead of 2 or 4, which is what lets 16-bit kernels reach
 *       copy bandwidth. The loop body is emitted once per element of the group from the same IR
 *       (same operations in the same order, so results are bit for bit those of the scalar form),
 *       loads hoisted into one vector load per array and stores sunk into one vector store. The
 *       last {@code n % width} elements run the scalar body. Vector accesses need every array
 *       aligned to its access size, which only the runtime can check ({@code CudaKernels.prepare}).</li>
 * </ul>
 * The {@code .version} is the lowest PTX ISA version that knows the target (7.8 for sm_90), so
 * the module loads on any driver that runs that GPU.
 */
public final class PtxEmitter {
    private final int sm;
    private final StringBuilder out = new StringBuilder();
    private final Map<String, Integer> counters = new HashMap<>();
    private final Map<Integer, String> varRegs = new HashMap<>();
    /** In the block being emitted: int variables known to be another one plus a constant (see {@link #address}). */
    private final Map<Var, IndexOffset> indexOffsets = new HashMap<>();
    private final Map<String, String> arrayBase = new HashMap<>();
    private final Map<String, String> arrayLen = new HashMap<>();
    /** Arrays loaded through the non-coherent (read-only data cache) path. */
    private final Set<String> nonCoherent;
    /** The element-wise loop to vectorize, or null for the scalar form. */
    private final ElementwiseLoop vector;

    /** The caller's grid of a KernelContext kernel, from its hidden parameters. */
    private final String[] globalSizeRegs = new String[3];
    /** Declarations before the entry: the kernel's tables. */
    private final StringBuilder moduleScope = new StringBuilder();
    private String kernelName;
    private int labels;

    private static boolean hasContext(KernelIr k) {
        return k.params().stream().anyMatch(p -> p instanceof KernelParam.ContextParam);
    }

    /** {@code <kernel>_a<id>}: an in-kernel array's name, the kernel's prefix keeping tables of a module's kernels apart. */
    private static String arrayName(String kernel, MemArray m) {
        return kernel + "_" + switch (m.space()) {
            case PRIVATE -> "a";
            case GROUP -> "s";
            case TABLE -> "t";
        } + m.id();
    }

    private static String space(MemArray m) {
        return switch (m.space()) {
            case PRIVATE -> "local";
            case GROUP -> "shared";
            case TABLE -> "const";
        };
    }

    /** The global index in dimension {@code d}: {@code ctaid * ntid + tid}. */
    private String globalId(int d) {
        String axis = String.valueOf("xyz".charAt(d));
        String c = fresh(RegClass.B32);
        String n = fresh(RegClass.B32);
        String x = fresh(RegClass.B32);
        String r = fresh(RegClass.B32);
        line("mov.u32 " + c + ", %ctaid." + axis);
        line("mov.u32 " + n + ", %ntid." + axis);
        line("mov.u32 " + x + ", %tid." + axis);
        line("mad.lo.s32 " + r + ", " + c + ", " + n + ", " + x);
        return r;
    }

    private PtxEmitter(int sm, Set<String> nonCoherent, ElementwiseLoop vector) {
        this.sm = sm;
        this.nonCoherent = nonCoherent;
        this.vector = vector;
    }

    /** The lowest PTX ISA version whose ptxas knows {@code sm_<sm>}. */
    public static String ptxVersion(int sm) {
        if (sm >= 120) {
            return "8.7";
        } else if (sm >= 100) {
            return "8.6";
        } else if (sm >= 89) {
            return "7.8";
        } else if (sm >= 87) {
            return "7.4";
        } else if (sm >= 86) {
            return "7.1";
        } else if (sm >= 80) {
            return "7.0";
        } else if (sm >= 75) {
            return "6.3";
        }
        throw new IllegalArgumentException("compute capability sm_" + sm + " is older than the oldest supported (sm_75)");
    }

    /** The module header: version, target, 64-bit addresses. */
    public static String header(int sm, String comment) {
        return "//\n// " + comment + "\n//\n\n.version " + ptxVersion(sm) + "\n.target sm_" + sm + "\n.address_size 64\n\n";
    }

    /** One complete PTX module holding the given kernels as entries, for compute capability {@code sm} (e.g. 90). */
    public static String module(List<KernelIr> kernels, int sm, String comment) {
        StringBuilder b = new StringBuilder(header(sm, comment));
        for (KernelIr k : kernels) {
            b.append(entry(k, sm)).append('\n');
        }
        return b.toString();
    }

    /**
     * One complete PTX module holding {@code kernel}, scalar or vectorized; see
     * {@link #entry(KernelIr, int, Set, boolean)}.
     */
    public static String module(KernelIr kernel, int sm, String comment, Set<String> nonCoherent, boolean vectorized) {
        return header(sm, comment) + entry(kernel, sm, nonCoherent, vectorized) + '\n';
    }

    /** The {@code .entry} of one kernel (without the module header), every load plain {@code ld.global}. */
    public static String entry(KernelIr kernel, int sm) {
        return entry(kernel, sm, Set.of());
    }

    /**
     * The {@code .entry} of one kernel (without the module header), loading the array parameters
     * named in {@code nonCoherent} with {@code ld.global.nc}. The caller must know that no memory
     * of those arrays is written while the kernel runs, by this kernel through another argument
     * or by anything else.
     *
     * @throws IllegalArgumentException if a name is not an array parameter of the kernel, or is
     *                                  one the kernel writes (it would read stale data)
     */
    public static String entry(KernelIr kernel, int sm, Set<String> nonCoherent) {
        return entry(kernel, sm, nonCoherent, false);
    }

    /**
     * As {@link #entry(KernelIr, int, Set)}, and when {@code vectorized} the vector form of an
     * element-wise kernel: correct only when every array the loop accesses starts at an address
     * aligned to its vector access ({@link ElementwiseLoop#accessBytes}); the caller checks.
     *
     * @throws IllegalArgumentException also if {@code vectorized} and the kernel is not element-wise
     */
    public static String entry(KernelIr kernel, int sm, Set<String> nonCoherent, boolean vectorized) {
        ptxVersion(sm);
        checkNonCoherent(kernel, nonCoherent);
        ElementwiseLoop loop = null;
        if (vectorized) {
            loop = ElementwiseLoop.find(kernel).orElseThrow(() -> new IllegalArgumentException("kernel " + kernel.name()
                    + " is not element-wise, so it has no vector form: " + ElementwiseLoop.rejection(kernel)));
        }
        return new PtxEmitter(sm, Set.copyOf(nonCoherent), loop).emit(kernel);
    }

    private static void checkNonCoherent(KernelIr kernel, Set<String> nonCoherent) {
        List<String> arrays = kernel.arrayParams().stream().map(ArrayParam::name).toList();
        for (String name : nonCoherent) {
            if (!arrays.contains(name)) {
                throw new IllegalArgumentException("kernel " + kernel.name() + ": non-coherent array " + name
                        + " is not one of its array parameters " + arrays);
            }
            if (kernel.writes(name)) {
                throw new IllegalArgumentException("kernel " + kernel.name() + ": array " + name
                        + " is written by the kernel, so it cannot be loaded non-coherently (ld.global.nc)");
            }
        }
    }

    // ------------------------------------------------------------------------------------------

    private enum RegClass {
        PRED(".pred", "%p"), B16(".b16", "%h"), B32(".b32", "%r"), B64(".b64", "%rd"), F32(".f32", "%f"), F64(".f64", "%fd");

        final String decl;
        final String prefix;

        RegClass(String decl, String prefix) {
            this.decl = decl;
            this.prefix = prefix;
        }
    }

    private final EnumMap<RegClass, Integer> regCount = new EnumMap<>(RegClass.class);

    private static RegClass classOf(IrType t) {
        return switch (t) {
            case I32 -> RegClass.B32;
            case I64 -> RegClass.B64;
            case F32 -> RegClass.F32;
            case F64 -> RegClass.F64;
        };
    }

    private String fresh(RegClass c) {
        int n = regCount.merge(c, 1, Integer::sum);
        return c.prefix + n;
    }

    private String fresh(IrType t) {
        return fresh(classOf(t));
    }

    private String reg(Var v) {
        return varRegs.computeIfAbsent(v.id(), id -> fresh(v.type()));
    }

    private static String suffix(IrType t, boolean signed) {
        return switch (t) {
            case I32 -> signed ? "s32" : "b32";
            case I64 -> signed ? "s64" : "b64";
            case F32 -> "f32";
            case F64 -> "f64";
        };
    }

    private static String immediate(Const c) {
        return switch (c.type()) {
            case I32 -> Integer.toString(c.intValue());
            case I64 -> Long.toString(c.bits());
            case F32 -> String.format(Locale.ROOT, "0f%08X", (int) c.bits());
            case F64 -> String.format(Locale.ROOT, "0d%016X", c.bits());
        };
    }

    /** The operand as a register, moving a constant into a fresh one first. */
    private String src(Operand o) {
        if (o instanceof Var v) {
            return reg(v);
        }
        Const c = (Const) o;
        String r = fresh(c.type());
        line("mov." + suffix(c.type(), true) + " " + r + ", " + immediate(c));
        return r;
    }

    private void line(String s) {
        out.append('\t').append(s).append(";\n");
    }

    private static String label(Block b) {
        return "$B" + b.id();
    }

    // ------------------------------------------------------------------------------------------

    private String emit(KernelIr k) {
        String name = k.name();
        kernelName = name;
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
                    int align = vector != null && vector.accessedArrays().contains(a.name()) ? vector.accessBytes(a) : a.element().bytes();
                    params.append("\t.param .u64 .ptr .global .align ").append(align).append(' ').append(ptr).append(",\n");
                    params.append("\t.param .u32 ").append(len).append(",\n");
                    String raw = fresh(RegClass.B64);
                    String base = fresh(RegClass.B64);
                    line("ld.param.u64 " + raw + ", [" + ptr + "]");
                    line("cvta.to.global.u64 " + base + ", " + raw);
                    arrayBase.put(a.name(), base);
                    String l = fresh(RegClass.B32);
                    line("ld.param.u32 " + l + ", [" + len + "]");
                    arrayLen.put(a.name(), l);
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
                globalSizeRegs[d] = fresh(RegClass.B32);
                line("ld.param.u32 " + globalSizeRegs[d] + ", [" + pn + "]");
            }
            String outside = fresh(RegClass.PRED);
            for (int d = 0; d < 3; d++) {
                String id = globalId(d);
                String past = fresh(RegClass.PRED);
                line("setp.ge.u32 " + past + ", " + id + ", " + globalSizeRegs[d]);
                line((d == 0 ? "mov.pred " + outside + ", " + past : "or.pred " + outside + ", " + outside + ", " + past));
            }
            line("@" + outside + " bra $L_exit");
        }
        if (!params.isEmpty()) {
            params.setLength(params.length() - 2);
            params.append('\n');
        }
        sig.append(params).append(")\n{\n");
        for (MemArray m : k.arrays()) {
            String type = m.elementBytes() == 8 ? ".b64" : ".b32";
            switch (m.space()) {
                case PRIVATE -> sig.append("\t.local .align 8 ").append(type).append(' ').append(arrayName(name, m)).append('[').append(Math.max(1, m.length())).append("];\n");
                case GROUP -> sig.append("\t.shared .align 8 ").append(type).append(' ').append(arrayName(name, m)).append('[').append(Math.max(1, m.length())).append("];\n");
                case TABLE -> {
                    StringBuilder t = new StringBuilder(".const .align 8 ").append(type).append(' ').append(arrayName(name, m))
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
            emitVectorized(vector);
        } else {
            List<Block> blocks = k.blocks();
            for (int i = 0; i < blocks.size(); i++) {
                Block b = blocks.get(i);
                Block next = i + 1 < blocks.size() ? blocks.get(i + 1) : null;
                out.append(label(b)).append(":\n");
                indexOffsets.clear();
                for (Insn insn : b.insns()) {
                    emitInsn(insn);
                    noteIndexOffset(insn);
                }
                emitTerminator(b.terminator(), next);
            }
        }
        if (hasContext(k)) {
            out.append("$L_exit:\n");
            line("ret");
        }
        out.append("}\n");

        StringBuilder decls = new StringBuilder();
        for (RegClass c : RegClass.values()) {
            Integer n = regCount.get(c);
            if (n != null) {
                decls.append("\t.reg ").append(c.decl).append(' ').append(c.prefix).append('<').append(n + 1).append(">;\n");
            }
        }
        return moduleScope + sig.toString() + decls + "\n" + out;
    }

    /**
     * The vector form of an element-wise loop ({@link ElementwiseLoop}), in place of the blocks:
     * <pre>
     *   prologue (global index, loop start, bound), n = max(bound, 0), groups = n / width
     *   for (g = gid; g < groups; g += gsize)         one vector load per loaded array,
     *       body for element g*width + 0 .. width-1   the body once per element,
     *                                                 one vector store per stored array
     *   for (i = groups*width + gid; i < n; i += gsize)   scalar body: the n % width left over
     * </pre>
     * The counters and bounds are never negative, so unsigned compares keep the loops right even
     * where {@code counter + gsize} passes {@code Integer.MAX_VALUE}.
     */
    private void emitVectorized(ElementwiseLoop loop) {
        int width = loop.width();
        int log = Integer.numberOfTrailingZeros(width);
        Var index = loop.index();
        for (Insn insn : loop.prologue()) {
            emitInsn(insn);
        }
        String gid = fresh(RegClass.B32);
        line("mov.b32 " + gid + ", " + reg(index)); // the prologue started the index at 0 + global index
        String n = fresh(RegClass.B32);
        line("max.s32 " + n + ", " + src(loop.bound()) + ", 0");
        String groups = fresh(RegClass.B32);
        line("shr.u32 " + groups + ", " + n + ", " + log);
        String gsize = globalSize();
        String g = fresh(RegClass.B32);
        line("mov.b32 " + g + ", " + gid);
        String none = fresh(RegClass.PRED);
        line("setp.ge.u32 " + none + ", " + g + ", " + groups);
        line("@" + none + " bra $V_tail");

        out.append("$V_loop:\n");
        String first = fresh(RegClass.B32);
        line("shl.b32 " + first + ", " + g + ", " + log);
        Map<Integer, String> offsetBySize = new HashMap<>();
        Map<String, String> groupAddress = new HashMap<>();
        for (ArrayParam a : accessedInParameterOrder(loop)) {
            int bytes = a.element().bytes();
            String off = offsetBySize.get(bytes);
            if (off == null) {
                off = fresh(RegClass.B64);
                line("mul.wide.s32 " + off + ", " + first + ", " + bytes);
                offsetBySize.put(bytes, off);
            }
            String addr = fresh(RegClass.B64);
            line("add.s64 " + addr + ", " + arrayBase.get(a.name()) + ", " + off);
            groupAddress.put(a.name(), addr);
        }
        Map<String, String[]> loadedLanes = new HashMap<>();
        for (ArrayParam a : loop.loaded()) {
            loadedLanes.put(a.name(), vectorLoad(a, groupAddress.get(a.name()), width));
        }
        Map<String, String[]> storedLanes = new LinkedHashMap<>();
        for (ArrayParam a : loop.stored()) {
            storedLanes.put(a.name(), new String[width]);
        }
        for (int lane = 0; lane < width; lane++) {
            // the index as a value (the accesses use the group address)
            if (lane == 0) {
                line("mov.b32 " + reg(index) + ", " + first);
            } else {
                line("add.s32 " + reg(index) + ", " + first + ", " + lane);
            }
            for (Insn insn : loop.body()) {
                switch (insn) {
                    case Insn.Load l -> laneLoad(l, lane, loadedLanes.get(l.array().name()));
                    case Insn.Store s -> storedLanes.get(s.array().name())[lane] = laneStore(s);
                    default -> emitInsn(insn);
                }
            }
        }
        for (ArrayParam a : loop.stored()) {
            vectorStore(a, groupAddress.get(a.name()), storedLanes.get(a.name()));
        }
        line("add.s32 " + g + ", " + g + ", " + gsize);
        String more = fresh(RegClass.PRED);
        line("setp.lt.u32 " + more + ", " + g + ", " + groups);
        line("@" + more + " bra $V_loop");

        out.append("$V_tail:\n");
        String tailStart = fresh(RegClass.B32);
        line("shl.b32 " + tailStart + ", " + groups + ", " + log);
        line("add.s32 " + reg(index) + ", " + tailStart + ", " + gid);
        String done = fresh(RegClass.PRED);
        line("setp.ge.u32 " + done + ", " + reg(index) + ", " + n);
        line("@" + done + " bra $V_exit");
        out.append("$V_tail_loop:\n");
        for (Insn insn : loop.body()) {
            emitInsn(insn);
        }
        line("add.s32 " + reg(index) + ", " + reg(index) + ", " + gsize);
        String again = fresh(RegClass.PRED);
        line("setp.lt.u32 " + again + ", " + reg(index) + ", " + n);
        line("@" + again + " bra $V_tail_loop");
        out.append("$V_exit:\n");
        line("ret");
    }

    private static List<ArrayParam> accessedInParameterOrder(ElementwiseLoop loop) {
        List<ArrayParam> all = new ArrayList<>(loop.loaded());
        for (ArrayParam a : loop.stored()) {
            if (!all.contains(a)) {
                all.add(a);
            }
        }
        all.sort(java.util.Comparator.comparingInt(ArrayParam::javaIndex));
        return all;
    }

    /** Threads in the grid: {@code %nctaid.x * %ntid.x}. */
    private String globalSize() {
        String c = fresh(RegClass.B32);
        String t = fresh(RegClass.B32);
        String d = fresh(RegClass.B32);
        line("mov.u32 " + c + ", %nctaid.x");
        line("mov.u32 " + t + ", %ntid.x");
        line("mul.lo.s32 " + d + ", " + c + ", " + t);
        return d;
    }

    /**
     * What one word of a vector access of {@code kind} is: its register class, its type in
     * {@code ld}/{@code st}, its type in {@code mov}, and how many elements it holds (two 16-bit
     * elements share a 32-bit word).
     */
    private record VectorWord(RegClass reg, String memType, String movType, int elements) {
        static VectorWord of(ElementKind kind) {
            return switch (kind) {
                case F32 -> new VectorWord(RegClass.F32, "f32", "f32", 1);
                case F64 -> new VectorWord(RegClass.F64, "f64", "f64", 1);
                case I32 -> new VectorWord(RegClass.B32, "u32", "b32", 1);
                case I64 -> new VectorWord(RegClass.B64, "u64", "b64", 1);
                case F16, BF16 -> new VectorWord(RegClass.B32, "b32", "b32", 2);
            };
        }
    }

    /**
     * One vector load of {@code width} elements of {@code a}: the registers of the elements, or
     * for 16-bit kinds of the 32-bit words holding two elements each (lower half first).
     */
    private String[] vectorLoad(ArrayParam a, String addr, int width) {
        String ld = nonCoherent.contains(a.name()) ? "ld.global.nc." : "ld.global.";
        VectorWord w = VectorWord.of(a.element());
        String[] regs = new String[width / w.elements()];
        for (int j = 0; j < regs.length; j++) {
            regs[j] = fresh(w.reg());
        }
        line(ld + "v" + regs.length + "." + w.memType() + " {" + String.join(", ", regs) + "}, [" + addr + "]");
        return regs;
    }

    /** A load of lane {@code lane} from the vector-loaded {@code data}: the same value the scalar load gives. */
    private void laneLoad(Insn.Load l, int lane, String[] data) {
        String d = reg(l.dst());
        ElementKind k = l.array().element();
        switch (k) {
            case F32, F64, I32, I64 -> line("mov." + VectorWord.of(k).movType() + " " + d + ", " + data[lane]);
            case F16, BF16 -> {
                String word = data[lane / 2];
                boolean high = (lane & 1) == 1; // little-endian: the even element is the low half
                if (l.rawBits()) {
                    // sign-extended, as ld.global.s16
                    if (high) {
                        line("shr.s32 " + d + ", " + word + ", 16");
                    } else {
                        String x = fresh(RegClass.B32);
                        line("shl.b32 " + x + ", " + word + ", 16");
                        line("shr.s32 " + d + ", " + x + ", 16");
                    }
                } else if (k == ElementKind.BF16) {
                    // a bf16 is the upper half of its f32
                    String x = fresh(RegClass.B32);
                    line((high ? "and.b32 " + x + ", " + word + ", -65536" : "shl.b32 " + x + ", " + word + ", 16"));
                    line("mov.b32 " + d + ", " + x);
                } else {
                    String lo = fresh(RegClass.B16);
                    String hi = fresh(RegClass.B16);
                    line("mov.b32 {" + lo + ", " + hi + "}, " + word);
                    line("cvt.f32.f16 " + d + ", " + (high ? hi : lo));
                }
            }
        }
    }

    /**
     * The value lane's store writes, in a register of its own (the next lane reuses the body's
     * registers): a copy for 32/64-bit kinds, the rounded 16 bits for half kinds.
     */
    private String laneStore(Insn.Store s) {
        ElementKind k = s.array().element();
        if (k.isHalf()) {
            return sixteenBits(s, src(s.value()));
        }
        String text = s.value() instanceof Const c ? immediate(c) : reg((Var) s.value());
        VectorWord w = VectorWord.of(k);
        String r = fresh(w.reg());
        line("mov." + w.movType() + " " + r + ", " + text);
        return r;
    }

    /** One vector store of the lanes' values; 16-bit values packed two to a 32-bit word, lower lane in the low half. */
    private void vectorStore(ArrayParam a, String addr, String[] lanes) {
        VectorWord w = VectorWord.of(a.element());
        String[] regs = lanes;
        if (w.elements() == 2) {
            regs = new String[lanes.length / 2];
            for (int j = 0; j < regs.length; j++) {
                regs[j] = fresh(RegClass.B32);
                line("mov.b32 " + regs[j] + ", {" + lanes[2 * j] + ", " + lanes[2 * j + 1] + "}");
            }
        }
        line("st.global.v" + regs.length + "." + w.memType() + " [" + addr + "], {" + String.join(", ", regs) + "}");
    }

    private void emitTerminator(Insn.Terminator t, Block next) {
        switch (t) {
            case Insn.Jump j -> {
                if (j.target() != next) {
                    line("bra.uni " + label(j.target()));
                }
            }
            case Insn.Return r -> line("ret");
            case Insn.Branch br -> {
                String a = src(br.a());
                String b = src(br.b());
                IrType type = br.a().type();
                String p = fresh(RegClass.PRED);
                String cmp = br.cond().name().toLowerCase(Locale.ROOT);
                if (type.isFloat() && br.unorderedTaken()) {
                    cmp += "u";
                }
                line("setp." + cmp + "." + suffix(type, true) + " " + p + ", " + a + ", " + b);
                if (br.ifTrue() == next) {
                    line("@!" + p + " bra " + label(br.ifFalse()));
                } else {
                    line("@" + p + " bra " + label(br.ifTrue()));
                    if (br.ifFalse() != next) {
                        line("bra.uni " + label(br.ifFalse()));
                    }
                }
            }
        }
    }

    private void emitInsn(Insn insn) {
        switch (insn) {
            case Insn.Move m -> {
                String s = m.src() instanceof Const c ? immediate(c) : reg((Var) m.src());
                line("mov." + suffix(m.dst().type(), false) + " " + reg(m.dst()) + ", " + s);
            }
            case Insn.Binary b -> emitBinary(b);
            case Insn.Unary u -> emitUnary(u);
            case Insn.Fma f -> {
                String a = src(f.a());
                String b = src(f.b());
                String c = src(f.c());
                line("fma.rn." + suffix(f.dst().type(), true) + " " + reg(f.dst()) + ", " + a + ", " + b + ", " + c);
            }
            case Insn.Convert c -> emitConvert(c);
            case Insn.Select x -> {
                String p = fresh(RegClass.PRED);
                line("setp." + x.cond().name().toLowerCase(Locale.ROOT) + "." + suffix(x.a().type(), true) + " " + p + ", "
                        + src(x.a()) + ", " + src(x.b()));
                line("selp." + suffix(x.dst().type(), true) + " " + reg(x.dst()) + ", " + src(x.ifTrue()) + ", " + src(x.ifFalse()) + ", " + p);
            }
            case Insn.Compare3 c -> {
                IrType t = c.a().type();
                String a = src(c.a());
                String b = src(c.b());
                String lt = fresh(RegClass.PRED);
                String gt = fresh(RegClass.PRED);
                line("setp.lt." + suffix(t, true) + " " + lt + ", " + a + ", " + b);
                line("setp.gt." + suffix(t, true) + " " + gt + ", " + a + ", " + b);
                String t1 = fresh(RegClass.B32);
                line("selp.s32 " + t1 + ", -1, 0, " + lt);
                if (t.isFloat()) {
                    String t2 = fresh(RegClass.B32);
                    line("selp.s32 " + t2 + ", 1, " + t1 + ", " + gt);
                    String nan = fresh(RegClass.PRED);
                    line("setp.nan." + suffix(t, true) + " " + nan + ", " + a + ", " + b);
                    line("selp.s32 " + reg(c.dst()) + ", " + c.nanResult() + ", " + t2 + ", " + nan);
                } else {
                    line("selp.s32 " + reg(c.dst()) + ", 1, " + t1 + ", " + gt);
                }
            }
            case Insn.Load l -> emitLoad(l);
            case Insn.Store s -> emitStore(s);
            case Insn.AtomicAdd a -> {
                String addr = address(a.array(), a.index());
                String v = src(a.value());
                String t = a.value().type() == IrType.F32 ? "f32" : a.value().type() == IrType.F64 ? "f64" : "s32";
                line("red.global.add." + t + " " + addr + ", " + v);
            }
            case Insn.ArrayLength l -> line("mov.b32 " + reg(l.dst()) + ", " + arrayLen.get(l.array().name()));
            case Insn.Thread t -> {
                String d = reg(t.dst());
                String axis = String.valueOf("xyz".charAt(t.dim()));
                switch (t.query()) {
                    case GLOBAL_IDX -> line("mov.b32 " + d + ", " + globalId(t.dim()));
                    case GLOBAL_SIZE -> {
                        if (globalSizeRegs[t.dim()] != null) {
                            line("mov.b32 " + d + ", " + globalSizeRegs[t.dim()]);
                        } else {
                            String c = fresh(RegClass.B32);
                            String n = fresh(RegClass.B32);
                            line("mov.u32 " + c + ", %nctaid." + axis);
                            line("mov.u32 " + n + ", %ntid." + axis);
                            line("mul.lo.s32 " + d + ", " + c + ", " + n);
                        }
                    }
                    case LOCAL_IDX -> line("mov.u32 " + d + ", %tid." + axis);
                    case GROUP_IDX -> line("mov.u32 " + d + ", %ctaid." + axis);
                    case LOCAL_SIZE -> line("mov.u32 " + d + ", %ntid." + axis);
                    case GROUP_COUNT -> line("mov.u32 " + d + ", %nctaid." + axis);
                }
            }
            case Insn.ArrayLoad l -> {
                String addr = memAddress(l.array(), l.index());
                line("ld." + space(l.array()) + "." + memType(l.array()) + " " + reg(l.dst()) + ", " + addr);
            }
            case Insn.ArrayStore st -> {
                String v = narrowed(st.array(), src(st.value()));
                String addr = memAddress(st.array(), st.index());
                line("st." + space(st.array()) + "." + memType(st.array()) + " " + addr + ", " + v);
            }
            case Insn.ArrayZero z -> emitZero(z.array());
            // not bar.sync (barrier.sync.aligned): a warp's threads may reach the barrier on different paths
            case Insn.Barrier b -> line("barrier.sync 0");
            case Insn.WarpReduce w -> emitWarpReduce(w);
            case Insn.Atomic a -> emitAtomic(a);
            case Insn.Terminator t -> throw new IllegalStateException("terminator inside a block");
        }
    }

    /**
     * {@code <kernel>_p<index>_<name>}: a parameter's {@code .param} name, the index keeping it
     * apart from every other parameter's.
     */
    private static String paramName(String kernel, KernelParam p) {
        return kernel + "_p" + p.javaIndex() + "_" + p.name();
    }

    /**
     * Java's integer division and remainder: MIN / -1 wraps to MIN and MIN % -1 is 0, where PTX
     * leaves the result unspecified. Java throws on a zero divisor; a kernel cannot, so x / 0 and
     * x % 0 are 0 here. A constant divisor other than 0 and -1 needs no guard.
     */
    private static String memType(MemArray m) {
        return switch (m.valueType()) {
            case I32 -> "u32";
            case I64 -> "u64";
            case F32 -> "f32";
            case F64 -> "f64";
        };
    }

    /** The memory operand of {@code m[index]}. */
    private String memAddress(MemArray m, Operand index) {
        String name = arrayName(kernelName, m);
        if (index instanceof Const c) {
            long off = (long) c.intValue() * m.elementBytes();
            return off == 0 ? "[" + name + "]" : "[" + name + "+" + off + "]";
        }
        String base = fresh(RegClass.B64);
        String off = fresh(RegClass.B64);
        String addr = fresh(RegClass.B64);
        line("mov.u64 " + base + ", " + name);
        line("mul.wide.s32 " + off + ", " + reg((Var) index) + ", " + m.elementBytes());
        line("add.s64 " + addr + ", " + base + ", " + off);
        return "[" + addr + "]";
    }

    /** The value a store to an array of a narrow Java type keeps: truncated and extended as Java's stores do. */
    private String narrowed(MemArray m, String v) {
        String r;
        switch (m.javaType()) {
            case 'B', 'S' -> {
                int sh = m.javaType() == 'B' ? 24 : 16;
                String x = fresh(RegClass.B32);
                r = fresh(RegClass.B32);
                line("shl.b32 " + x + ", " + v + ", " + sh);
                line("shr.s32 " + r + ", " + x + ", " + sh);
            }
            case 'C' -> {
                r = fresh(RegClass.B32);
                line("and.b32 " + r + ", " + v + ", 65535");
            }
            case 'Z' -> {
                r = fresh(RegClass.B32);
                line("and.b32 " + r + ", " + v + ", 1");
            }
            default -> r = v;
        }
        return r;
    }

    /** {@code new T[n]} each time it runs: every element zero. */
    private void emitZero(MemArray m) {
        if (m.length() == 0) {
            return;
        }
        String type = m.elementBytes() == 8 ? "b64" : "b32";
        String name = arrayName(kernelName, m);
        if (m.length() <= 16) {
            for (int i = 0; i < m.length(); i++) {
                line("st.local." + type + " [" + name + (i == 0 ? "" : "+" + i * m.elementBytes()) + "], 0");
            }
            return;
        }
        String label = "$Z" + labels++;
        String p = fresh(RegClass.B64);
        String end = fresh(RegClass.B64);
        String more = fresh(RegClass.PRED);
        line("mov.u64 " + p + ", " + name);
        line("add.s64 " + end + ", " + p + ", " + (long) m.length() * m.elementBytes());
        out.append(label).append(":\n");
        line("st.local." + type + " [" + p + "], 0");
        line("add.s64 " + p + ", " + p + ", " + m.elementBytes());
        line("setp.lt.u64 " + more + ", " + p + ", " + end);
        line("@" + more + " bra " + label);
    }

    /** A butterfly over the warp with {@code shfl.sync.bfly}: the lane's own value first in each add, as the JVM's tree. */
    private void emitWarpReduce(Insn.WarpReduce w) {
        boolean f32 = w.value().type() == IrType.F32;
        String bits = fresh(RegClass.B32);
        line("mov.b32 " + bits + ", " + src(w.value()));
        for (int off = 16; off > 0; off >>= 1) {
            String other = fresh(RegClass.B32);
            line("shfl.sync.bfly.b32 " + other + ", " + bits + ", " + off + ", 31, -1");
            String next = fresh(RegClass.B32);
            if (f32) {
                String a = fresh(RegClass.F32);
                String c = fresh(RegClass.F32);
                line("mov.b32 " + a + ", " + bits);
                line("mov.b32 " + c + ", " + other);
                String r;
                if (w.max()) {
                    r = javaMinMax(BinOp.MAX, IrType.F32, a, c);
                } else {
                    r = fresh(RegClass.F32);
                    line("add.rn.f32 " + r + ", " + a + ", " + c);
                }
                line("mov.b32 " + next + ", " + r);
            } else {
                line((w.max() ? "max.s32 " : "add.s32 ") + next + ", " + bits + ", " + other);
            }
            bits = next;
        }
        line("mov.b32 " + reg(w.dst()) + ", " + bits);
    }

    private static String scope(Insn.Scope s) {
        return switch (s) {
            case GROUP -> ".cta";
            case DEVICE -> ".gpu";
            case SYSTEM -> ".sys";
        };
    }

    /**
     * An atomic with PTX's memory model (sm_70 and later): {@code .relaxed}, {@code .acquire},
     * {@code .release} or {@code .acq_rel} on {@code atom}, {@code ld} and {@code st}, at
     * {@code .cta}, {@code .gpu} or {@code .sys} scope; sequential consistency is a {@code fence.sc}
     * before the acquire-release form. Float max and min have no instruction with Java's NaN and
     * signed-zero rules, so they are a compare-and-swap loop around Java's max or min.
     */
    private void emitAtomic(Insn.Atomic a) {
        String addr = address(a.array(), a.index());
        IrType t = a.array().element().valueType();
        String sc = scope(a.scope());
        if (a.order() == Insn.Order.SEQ_CST) {
            line("fence.sc" + sc);
        }
        String sem = switch (a.order()) {
            case RELAXED -> ".relaxed";
            case ACQUIRE -> ".acquire";
            case RELEASE -> ".release";
            case ACQ_REL, SEQ_CST -> ".acq_rel";
        };
        String bits = t.isWide() ? "b64" : "b32";
        String d = a.dst() == null ? null : reg(a.dst());
        switch (a.op()) {
            case LOAD -> line("ld" + (a.order() == Insn.Order.RELAXED ? ".relaxed" : ".acquire") + sc + ".global." + memTypeOf(t) + " " + d + ", " + addr);
            case STORE -> line("st" + (a.order() == Insn.Order.RELAXED ? ".relaxed" : ".release") + sc + ".global." + memTypeOf(t) + " " + addr + ", " + src(a.value()));
            case EXCHANGE -> line("atom" + sem + sc + ".global.exch." + bits + " " + d + ", " + addr + ", " + src(a.value()));
            case COMPARE_EXCHANGE -> {
                String expected = src(a.expected());
                String value = src(a.value());
                line("atom" + sem + sc + ".global.cas." + bits + " " + d + ", " + addr + ", " + expected + ", " + value);
            }
            case ADD -> line("atom" + sem + sc + ".global.add." + (t == IrType.I32 ? "u32" : t == IrType.I64 ? "u64" : "f32") + " " + d + ", " + addr + ", " + src(a.value()));
            case MAX, MIN -> {
                if (!t.isFloat()) {
                    line("atom" + sem + sc + ".global." + (a.op() == Insn.AtomicOp.MAX ? "max." : "min.") + suffix(t, true) + " " + d + ", " + addr + ", " + src(a.value()));
                } else {
                    floatMinMaxLoop(a, addr, sem, sc, d);
                }
            }
        }
    }

    private void floatMinMaxLoop(Insn.Atomic a, String addr, String sem, String sc, String d) {
        String v = src(a.value());
        String oldBits = fresh(RegClass.B32);
        String seen = fresh(RegClass.B32);
        String oldF = fresh(RegClass.F32);
        String newBits = fresh(RegClass.B32);
        String same = fresh(RegClass.PRED);
        String label = "$M" + labels++;
        line("ld.relaxed" + sc + ".global.b32 " + oldBits + ", " + addr);
        out.append(label).append("_loop:\n");
        line("mov.b32 " + oldF + ", " + oldBits);
        String m = javaMinMax(a.op() == Insn.AtomicOp.MAX ? BinOp.MAX : BinOp.MIN, IrType.F32, oldF, v);
        line("mov.b32 " + newBits + ", " + m);
        line("setp.eq.b32 " + same + ", " + newBits + ", " + oldBits);
        line("@" + same + " bra " + label + "_done");
        line("atom" + sem + sc + ".global.cas.b32 " + seen + ", " + addr + ", " + oldBits + ", " + newBits);
        String retry = fresh(RegClass.PRED);
        line("setp.ne.b32 " + retry + ", " + seen + ", " + oldBits);
        line("mov.b32 " + oldBits + ", " + seen);
        line("@" + retry + " bra " + label + "_loop");
        out.append(label).append("_done:\n");
        line("mov.b32 " + d + ", " + oldBits);
    }

    private static String memTypeOf(IrType t) {
        return switch (t) {
            case I32 -> "u32";
            case I64 -> "u64";
            case F32 -> "f32";
            case F64 -> "f64";
        };
    }

    /** Java's Math.min / max of two float registers: NaN if either is NaN (PTX's would return the other operand). */
    private String javaMinMax(BinOp op, IrType t, String a, String c) {
        String s = suffix(t, true);
        String m = fresh(t);
        String sum = fresh(t);
        String nan = fresh(RegClass.PRED);
        String d = fresh(t);
        line((op == BinOp.MIN ? "min." : "max.") + s + " " + m + ", " + a + ", " + c);
        line("add.rn." + s + " " + sum + ", " + a + ", " + c);
        line("setp.nan." + s + " " + nan + ", " + a + ", " + c);
        line("selp." + s + " " + d + ", " + sum + ", " + m + ", " + nan);
        return d;
    }

    private void emitBinary(Insn.Binary b) {
        IrType t = b.dst().type();
        String d = reg(b.dst());
        String s = suffix(t, true);
        String bits = t.isWide() ? "b64" : "b32";
        switch (b.op()) {
            case SHL, SHR, USHR -> {
                String a = src(b.a());
                String count = b.b() instanceof Const c ? Integer.toString(c.intValue()) : reg((Var) b.b()); // masked by the lowering
                String op = switch (b.op()) {
                    case SHL -> "shl." + bits;
                    case SHR -> "shr." + s;
                    default -> "shr." + (t.isWide() ? "u64" : "u32");
                };
                line(op + " " + d + ", " + a + ", " + count);
            }
            case MIN, MAX -> {
                String a = src(b.a());
                String c = src(b.b());
                String op = b.op() == BinOp.MIN ? "min." : "max.";
                if (!t.isFloat()) {
                    line(op + s + " " + d + ", " + a + ", " + c);
                } else {
                    line("mov." + s + " " + d + ", " + javaMinMax(b.op(), t, a, c));
                }
            }
            default -> {
                String a = src(b.a());
                String c = src(b.b());
                String op = switch (b.op()) {
                    case ADD -> t.isFloat() ? "add.rn." + s : "add." + s;
                    case SUB -> t.isFloat() ? "sub.rn." + s : "sub." + s;
                    case MUL -> t.isFloat() ? "mul.rn." + s : "mul.lo." + s;
                    case DIV -> t.isFloat() ? "div.rn." + s : "div." + s; // an integer divisor is never 0 or -1 here (the lowering)
                    case REM -> "rem." + s;
                    case AND -> "and." + bits;
                    case OR -> "or." + bits;
                    case XOR -> "xor." + bits;
                    default -> throw new IllegalStateException(b.op().name());
                };
                line(op + " " + d + ", " + a + ", " + c);
            }
        }
    }

    private void emitUnary(Insn.Unary u) {
        String a = src(u.a());
        String d = reg(u.dst());
        IrType t = u.a().type();
        switch (u.op()) {
            case NEG -> line("neg." + suffix(t, true) + " " + d + ", " + a);
            case ABS -> {
                if (!t.isFloat()) {
                    throw new IllegalStateException("integer abs reaches the emitter: the lowering writes it out");
                }
                line("abs." + suffix(t, true) + " " + d + ", " + a);
            }
            case SQRT -> line("sqrt.rn." + suffix(t, true) + " " + d + ", " + a);
            case BITCAST -> line("mov." + (t.isWide() ? "b64" : "b32") + " " + d + ", " + a);
            case BF16_BITS_TO_F32 -> {
                String x = fresh(RegClass.B32);
                line("shl.b32 " + x + ", " + a + ", 16");
                line("mov.b32 " + d + ", " + x);
            }
            case HALF_BITS_TO_F32 -> {
                String h = fresh(RegClass.B16);
                line("cvt.u16.u32 " + h + ", " + a);
                line("cvt.f32.f16 " + d + ", " + h);
            }
            case F32_TO_HALF_BITS -> {
                String h = fresh(RegClass.B16);
                line("cvt.rn.f16.f32 " + h + ", " + a);
                line("cvt.s32.s16 " + d + ", " + h);
            }
            case F32_TO_BF16_BITS -> {
                String h = bf16Round(a);
                line("cvt.s32.s16 " + d + ", " + h);
            }
        }
    }

    /** Rounds an f32 register to bf16 (nearest even), returning a .b16 register. */
    private String bf16Round(String f) {
        String h = fresh(RegClass.B16);
        if (sm >= 80) {
            line("cvt.rn.bf16.f32 " + h + ", " + f);
            return h;
        }
        String bits = fresh(RegClass.B32);
        String lsb = fresh(RegClass.B32);
        String sum = fresh(RegClass.B32);
        String hi = fresh(RegClass.B32);
        String quiet = fresh(RegClass.B32);
        String res = fresh(RegClass.B32);
        String nan = fresh(RegClass.PRED);
        line("mov.b32 " + bits + ", " + f);
        line("bfe.u32 " + lsb + ", " + bits + ", 16, 1");
        line("add.s32 " + sum + ", " + bits + ", " + lsb);
        line("add.s32 " + sum + ", " + sum + ", 32767");
        line("shr.u32 " + hi + ", " + sum + ", 16");
        line("shr.u32 " + quiet + ", " + bits + ", 16");
        line("or.b32 " + quiet + ", " + quiet + ", 64");
        line("setp.nan.f32 " + nan + ", " + f + ", " + f);
        line("selp.b32 " + res + ", " + quiet + ", " + hi + ", " + nan);
        line("cvt.u16.u32 " + h + ", " + res);
        return h;
    }

    /**
     * Java's float-to-integer conversion: truncate, saturate, and NaN to 0. {@code cvt.rzi}
     * saturates, but on sm_90 a NaN became MIN_VALUE for 64-bit results (seen on an H200), so
     * NaN is selected away explicitly.
     */
    private void floatToInt(String to, String from, String d, String a) {
        String nan = fresh(RegClass.PRED);
        line("cvt.rzi." + to + "." + from + " " + d + ", " + a);
        line("setp.nan." + from + " " + nan + ", " + a + ", " + a);
        line("selp." + to + " " + d + ", 0, " + d + ", " + nan);
    }

    private void emitConvert(Insn.Convert c) {
        String a = src(c.src());
        String d = reg(c.dst());
        switch (c.op()) {
            case I2L -> line("cvt.s64.s32 " + d + ", " + a);
            case L2I -> line("cvt.u32.u64 " + d + ", " + a);
            case I2F -> line("cvt.rn.f32.s32 " + d + ", " + a);
            case I2D -> line("cvt.rn.f64.s32 " + d + ", " + a);
            case L2F -> line("cvt.rn.f32.s64 " + d + ", " + a);
            case L2D -> line("cvt.rn.f64.s64 " + d + ", " + a);
            case F2I -> floatToInt("s32", "f32", d, a);
            case F2L -> floatToInt("s64", "f32", d, a);
            case D2I -> floatToInt("s32", "f64", d, a);
            case D2L -> floatToInt("s64", "f64", d, a);
            case F2D -> line("cvt.f64.f32 " + d + ", " + a);
            case D2F -> line("cvt.rn.f32.f64 " + d + ", " + a);
            case I2B, I2S -> {
                int sh = c.op() == Insn.ConvOp.I2B ? 24 : 16;
                String x = fresh(RegClass.B32);
                line("shl.b32 " + x + ", " + a + ", " + sh);
                line("shr.s32 " + d + ", " + x + ", " + sh);
            }
            case I2C -> line("and.b32 " + d + ", " + a + ", 65535");
        }
    }

    /** The memory operand {@code [..]} of {@code array[index]}. */
    private String address(ArrayParam array, Operand index) {
        String base = arrayBase.get(array.name());
        int bytes = array.element().bytes();
        if (index instanceof Const c) {
            long off = (long) c.intValue() * bytes;
            return off == 0 ? "[" + base + "]" : "[" + base + "+" + off + "]";
        }
        IndexOffset known = indexOffsets.get((Var) index);
        Var from = known != null ? known.base() : (Var) index;
        String off = fresh(RegClass.B64);
        String addr = fresh(RegClass.B64);
        line("mul.wide.s32 " + off + ", " + reg(from) + ", " + bytes);
        line("add.s64 " + addr + ", " + base + ", " + off);
        return known != null && known.plus() != 0 ? "[" + addr + "+" + known.plus() * bytes + "]" : "[" + addr + "]";
    }

    private record IndexOffset(Var base, long plus) {
    }

    /**
     * After {@code insn}: what it makes known about an int index (its result is another int plus a
     * constant, or a copy of such), and what it makes stale (offsets from a variable it assigns).
     */
    private void noteIndexOffset(Insn insn) {
        Var d = ElementwiseLoop.def(insn);
        if (d == null) {
            return;
        }
        IndexOffset found = null;
        if (d.type() == IrType.I32) {
            if (insn instanceof Insn.Binary b && b.op() == BinOp.ADD) {
                Operand x = b.a() instanceof Const ? b.b() : b.a();
                Operand c = b.a() instanceof Const ? b.a() : b.b();
                if (x instanceof Var v && c instanceof Const k && k.intValue() >= 0 && k.intValue() <= 1 << 24) {
                    IndexOffset via = indexOffsets.get(v);
                    found = via != null ? new IndexOffset(via.base(), via.plus() + k.intValue()) : new IndexOffset(v, k.intValue());
                    if (found.plus() > 1 << 24) {
                        found = null;
                    }
                }
            } else if (insn instanceof Insn.Move m && m.src() instanceof Var v) {
                found = indexOffsets.get(v);
            }
        }
        indexOffsets.remove(d);
        indexOffsets.values().removeIf(o -> o.base().equals(d));
        if (found != null && !found.base().equals(d)) {
            indexOffsets.put(d, found);
        }
    }

    private void emitLoad(Insn.Load l) {
        String addr = address(l.array(), l.index());
        String d = reg(l.dst());
        ElementKind k = l.array().element();
        String ld = nonCoherent.contains(l.array().name()) ? "ld.global.nc." : "ld.global.";
        switch (k) {
            case F32 -> line(ld + "f32 " + d + ", " + addr);
            case F64 -> line(ld + "f64 " + d + ", " + addr);
            case I32 -> line(ld + "u32 " + d + ", " + addr);
            case I64 -> line(ld + "u64 " + d + ", " + addr);
            case F16, BF16 -> {
                if (l.rawBits()) {
                    line(ld + "s16 " + d + ", " + addr);
                } else if (k == ElementKind.F16) {
                    String h = fresh(RegClass.B16);
                    line(ld + "b16 " + h + ", " + addr);
                    line("cvt.f32.f16 " + d + ", " + h);
                } else {
                    String x = fresh(RegClass.B32);
                    String y = fresh(RegClass.B32);
                    line(ld + "u16 " + x + ", " + addr);
                    line("shl.b32 " + y + ", " + x + ", 16");
                    line("mov.b32 " + d + ", " + y);
                }
            }
        }
    }

    private void emitStore(Insn.Store s) {
        String v = src(s.value());
        String addr = address(s.array(), s.index());
        ElementKind k = s.array().element();
        switch (k) {
            case F32 -> line("st.global.f32 " + addr + ", " + v);
            case F64 -> line("st.global.f64 " + addr + ", " + v);
            case I32 -> line("st.global.u32 " + addr + ", " + v);
            case I64 -> line("st.global.u64 " + addr + ", " + v);
            case F16, BF16 -> line("st.global.b16 " + addr + ", " + sixteenBits(s, v));
        }
    }

    /** The 16 bits a store to a half-kind array writes, as a .b16 register: rounded, or the raw low bits. */
    private String sixteenBits(Insn.Store s, String v) {
        if (s.rawBits()) {
            String h = fresh(RegClass.B16);
            line("cvt.u16.u32 " + h + ", " + v);
            return h;
        } else if (s.array().element() == ElementKind.F16) {
            String h = fresh(RegClass.B16);
            line("cvt.rn.f16.f32 " + h + ", " + v);
            return h;
        }
        return bf16Round(v);
    }
}
