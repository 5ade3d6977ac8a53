package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The vectorized form of an element-wise kernel: each thread takes groups of {@code width}
 * consecutive elements, so every array moves 8 or 16 bytes per access ({@code ld/st.global.v2/.v4})
 * instead of 2 or 4, which is what lets 16-bit kernels reach copy bandwidth. The loop body is
 * emitted once per element of the group by {@link ScalarEmitter}, from the same IR in the same
 * order, so results are bit for bit those of the scalar form; only the loads and stores of the
 * arrays become lanes of one vector access each.
 */
final class VectorForm extends PtxPart {
    private final Addresses addresses;
    private final ScalarEmitter scalar;
    private final FloatSemantics floats;

    VectorForm(PtxWriter w, Addresses addresses, ScalarEmitter scalar, FloatSemantics floats) {
        super(w);
        this.addresses = addresses;
        this.scalar = scalar;
        this.floats = floats;
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
    void emit(ElementwiseLoop loop) {
        int width = loop.width();
        int log = Integer.numberOfTrailingZeros(width);
        Var index = loop.index();
        emitPrologue(loop);
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

        w.label("$V_loop");
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
            line("add.s64 " + addr + ", " + addresses.base(a) + ", " + off);
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
                    default -> scalar.emitInsn(insn);
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

        w.label("$V_tail");
        String tailStart = fresh(RegClass.B32);
        line("shl.b32 " + tailStart + ", " + groups + ", " + log);
        line("add.s32 " + reg(index) + ", " + tailStart + ", " + gid);
        String done = fresh(RegClass.PRED);
        line("setp.ge.u32 " + done + ", " + reg(index) + ", " + n);
        line("@" + done + " bra $V_exit");
        w.label("$V_tail_loop");
        for (Insn insn : loop.body()) {
            scalar.emitInsn(insn);
        }
        line("add.s32 " + reg(index) + ", " + reg(index) + ", " + gsize);
        String again = fresh(RegClass.PRED);
        line("setp.lt.u32 " + again + ", " + reg(index) + ", " + n);
        line("@" + again + " bra $V_tail_loop");
        w.label("$V_exit");
        line("ret");
    }

    /**
     * The code before the loop: its instructions, or where it branches its blocks, each with its
     * label and terminator but the last, whose loop test the form's loops replace.
     */
    private void emitPrologue(ElementwiseLoop loop) {
        if (!loop.prologueBranches()) {
            for (Insn insn : loop.prologue()) {
                scalar.emitInsn(insn);
            }
            return;
        }
        List<Block> blocks = loop.prologueBlocks();
        for (int i = 0; i < blocks.size(); i++) {
            Block b = blocks.get(i);
            w.label(blockLabel(b));
            addresses.startBlock();
            for (Insn insn : b.insns()) {
                scalar.emitInsn(insn);
            }
            if (i + 1 < blocks.size()) {
                scalar.emitTerminator(b.terminator(), blocks.get(i + 1));
            }
        }
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
        String ld = scalar.globalLoad(a);
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
            return floats.sixteenBits(s, src(s.value()));
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
}
