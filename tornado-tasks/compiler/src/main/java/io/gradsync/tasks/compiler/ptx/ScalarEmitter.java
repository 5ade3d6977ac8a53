package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.BoundsFaults;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;
import io.gradsync.tasks.compiler.optimize.AdjacentLoads;

import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Scalar instruction emission: each IR instruction and terminator as the PTX that computes it,
 * one thread, one element. Floating-point arithmetic carries explicit {@code .rn} rounding (Java's
 * IEEE results, and no contraction of a multiply and an add into an fma), denormals are kept (no
 * {@code .ftz}); where Java's result needs more than one instruction, {@link FloatSemantics}
 * writes the sequence. Atomics, barriers and warp reductions are here too.
 */
final class ScalarEmitter extends PtxPart {
    private final Addresses addresses;
    private final FloatSemantics floats;
    /** Arrays loaded through the non-coherent (read-only data cache) path. */
    private final Set<String> nonCoherent;
    /** Loads merged into vector loads (the merged form), or none. */
    private final AdjacentLoads merged;
    /** Each merged group's lane registers, once its vector load is emitted (at its first load). */
    private final Map<AdjacentLoads.Group, String[]> laneRegisters = new IdentityHashMap<>();
    /** The caller's grid of a KernelContext kernel, from its hidden parameters (set by {@link KernelEntry}). */
    final String[] globalSizeRegs = new String[3];
    /**
     * Where every array access is tested against its array's length first (a user's kernel): the
     * global address of the fault record ({@link io.gradsync.tasks.compiler.ir.BoundsFaults}), set
     * by {@link KernelEntry}; null, no tests.
     */
    String faultRecord;
    /**
     * A thread's first global load or store out of bounds, kept in registers (its code, 0 for none,
     * and its index) until the thread returns ({@link #startFaults}, {@link #recordFault}): the
     * accesses then stay in one block, predicated, instead of each one branched around, which kept
     * a loop's loads from being issued together.
     */
    private String faultCode;
    private String faultIndex;
    /** The predicate ({@code "@p "}) that a guarded global load or store is emitted under; empty for none. */
    private String accessGuard = "";
    private int labels;

    ScalarEmitter(PtxWriter w, Addresses addresses, FloatSemantics floats, Set<String> nonCoherent, AdjacentLoads merged) {
        super(w);
        this.addresses = addresses;
        this.floats = floats;
        this.nonCoherent = nonCoherent;
        this.merged = merged;
    }

    /** The load instruction's prefix for array {@code a}: {@code ld.global.nc.} where it is non-coherent. */
    String globalLoad(ArrayParam a) {
        return nonCoherent.contains(a.name()) ? "ld.global.nc." : "ld.global.";
    }

    /** The global index in dimension {@code d}: {@code ctaid * ntid + tid}. */
    String globalId(int d) {
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

    void emitTerminator(Insn.Terminator t, Block next) {
        switch (t) {
            case Insn.Jump j -> {
                if (j.target() != next) {
                    line("bra.uni " + blockLabel(j.target()));
                }
            }
            case Insn.Return r -> {
                recordFault();
                line("ret");
            }
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
                    line("@!" + p + " bra " + blockLabel(br.ifFalse()));
                } else {
                    line("@" + p + " bra " + blockLabel(br.ifTrue()));
                    if (br.ifFalse() != next) {
                        line("bra.uni " + blockLabel(br.ifFalse()));
                    }
                }
            }
        }
    }

    void emitInsn(Insn insn) {
        if (faultRecord != null) {
            switch (insn) {
                case Insn.Load l -> predicated(insn, l.index(), addresses.length(l.array()), BoundsFaults.code(l.array()), l.dst());
                case Insn.Store st -> predicated(insn, st.index(), addresses.length(st.array()), BoundsFaults.code(st.array()), null);
                case Insn.AtomicAdd a -> guarded(insn, a.index(), addresses.length(a.array()), BoundsFaults.code(a.array()), null);
                case Insn.Atomic a -> guarded(insn, a.index(), addresses.length(a.array()), BoundsFaults.code(a.array()), a.dst());
                case Insn.ArrayLoad l -> guarded(insn, l.index(), String.valueOf(l.array().length()), BoundsFaults.code(l.array()), l.dst());
                case Insn.ArrayStore st -> guarded(insn, st.index(), String.valueOf(st.array().length()), BoundsFaults.code(st.array()), null);
                default -> emitPlain(insn);
            }
            return;
        }
        emitPlain(insn);
    }

    /** Starts a checked kernel's thread with no fault seen: at its entry, before any access. */
    void startFaults() {
        faultCode = fresh(RegClass.B32);
        faultIndex = fresh(RegClass.B32);
        line("mov.b32 " + faultCode + ", 0");
        line("mov.b32 " + faultIndex + ", 0");
    }

    /** At a return: the thread's first fault, if any, into the record (the code by compare-and-swap from 0, then the index). */
    private void recordFault() {
        if (faultCode == null) {
            return;
        }
        String any = fresh(RegClass.PRED);
        line("setp.ne.u32 " + any + ", " + faultCode + ", 0");
        String before = fresh(RegClass.B32);
        line("@" + any + " atom.global.cas.b32 " + before + ", [" + faultRecord + "], 0, " + faultCode);
        String first = fresh(RegClass.PRED);
        line("setp.eq.and.u32 " + first + ", " + before + ", 0, " + any);
        line("@" + first + " st.global.u32 [" + faultRecord + "+4], " + faultIndex);
    }

    /**
     * A global load or store done only where its index lies in {@code [0, length)}, under a
     * predicate, no branch: otherwise the thread's first such access kept for {@link #recordFault},
     * a load's {@code dst} set to 0.
     */
    private void predicated(Insn access, Operand index, String length, int code, Var dst) {
        String i = indexRegister(index);
        String ok = fresh(RegClass.PRED);
        line("setp.lt.u32 " + ok + ", " + i + ", " + length);
        String take = fresh(RegClass.PRED);
        line("setp.eq.and.u32 " + take + ", " + faultCode + ", 0, !" + ok);
        line("@" + take + " mov.b32 " + faultCode + ", " + code);
        line("@" + take + " mov.b32 " + faultIndex + ", " + i);
        accessGuard = "@" + ok + " ";
        try {
            emitPlain(access);
        } finally {
            accessGuard = "";
        }
        if (dst != null) {
            line("@!" + ok + " " + zero(dst));
        }
    }

    /** The index of a checked access in a register (a constant moved into one), for the test and the record. */
    private String indexRegister(Operand index) {
        String i = src(index);
        if (index instanceof Const) {
            String r = fresh(RegClass.B32);
            line("mov.b32 " + r + ", " + i);
            i = r;
        }
        return i;
    }

    /** The instruction that sets a skipped load's {@code dst} to 0. */
    private String zero(Var dst) {
        return switch (dst.type()) {
            case I32 -> "mov.b32 " + reg(dst) + ", 0";
            case I64 -> "mov.b64 " + reg(dst) + ", 0";
            case F32 -> "mov.f32 " + reg(dst) + ", 0f00000000";
            case F64 -> "mov.f64 " + reg(dst) + ", 0d0000000000000000";
        };
    }

    /**
     * {@code access} where its index lies in {@code [0, length)}; otherwise the first such access
     * of the launch recorded ({@link #faultRecord}: the code by compare-and-swap from 0, then the
     * index) and the access skipped, a load's {@code dst} set to 0. (What {@link Addresses} knows of
     * indices holds on both sides: the test defines no variable but {@code dst}, on both.)
     */
    private void guarded(Insn access, Operand index, String length, int code, Var dst) {
        String i = indexRegister(index);
        int n = labels++;
        String inBounds = "$InBounds" + n;
        String done = "$Checked" + n;
        String ok = fresh(RegClass.PRED);
        line("setp.lt.u32 " + ok + ", " + i + ", " + length);
        line("@" + ok + " bra " + inBounds);
        String before = fresh(RegClass.B32);
        line("atom.global.cas.b32 " + before + ", [" + faultRecord + "], 0, " + code);
        String first = fresh(RegClass.PRED);
        line("setp.eq.u32 " + first + ", " + before + ", 0");
        line("@" + first + " st.global.u32 [" + faultRecord + "+4], " + i);
        if (dst != null) {
            line(zero(dst));
        }
        line("bra.uni " + done);
        w.label(inBounds);
        emitPlain(access);
        w.label(done);
    }

    private void emitPlain(Insn insn) {
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
                String addr = addresses.address(a.array(), a.index());
                String v = src(a.value());
                String t = a.value().type() == IrType.F32 ? "f32" : a.value().type() == IrType.F64 ? "f64" : "s32";
                line("red.global.add." + t + " " + addr + ", " + v);
            }
            case Insn.ArrayLength l -> line("mov.b32 " + reg(l.dst()) + ", " + addresses.length(l.array()));
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
                String addr = addresses.memAddress(l.array(), l.index());
                line("ld." + Addresses.space(l.array()) + "." + memType(l.array().valueType()) + " " + reg(l.dst()) + ", " + addr);
            }
            case Insn.ArrayStore st -> {
                String v = narrowed(st.array(), src(st.value()));
                String addr = addresses.memAddress(st.array(), st.index());
                line("st." + Addresses.space(st.array()) + "." + memType(st.array().valueType()) + " " + addr + ", " + v);
            }
            case Insn.ArrayZero z -> emitZero(z.array());
            // not bar.sync (barrier.sync.aligned): a warp's threads may reach the barrier on different paths
            case Insn.Barrier b -> line("barrier.sync 0");
            case Insn.WarpReduce r -> emitWarpReduce(r);
            case Insn.Atomic a -> emitAtomic(a);
            case Insn.Terminator t -> throw new IllegalStateException("terminator inside a block");
        }
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
        String name = addresses.name(m);
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
        w.label(label);
        line("st.local." + type + " [" + p + "], 0");
        line("add.s64 " + p + ", " + p + ", " + m.elementBytes());
        line("setp.lt.u64 " + more + ", " + p + ", " + end);
        line("@" + more + " bra " + label);
    }

    /** A butterfly over the warp with {@code shfl.sync.bfly}: the lane's own value first in each add, as the JVM's tree. */
    private void emitWarpReduce(Insn.WarpReduce warp) {
        boolean f32 = warp.value().type() == IrType.F32;
        String bits = fresh(RegClass.B32);
        line("mov.b32 " + bits + ", " + src(warp.value()));
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
                if (warp.max()) {
                    r = floats.javaMinMax(BinOp.MAX, IrType.F32, a, c);
                } else {
                    r = fresh(RegClass.F32);
                    line("add.rn.f32 " + r + ", " + a + ", " + c);
                }
                line("mov.b32 " + next + ", " + r);
            } else {
                line((warp.max() ? "max.s32 " : "add.s32 ") + next + ", " + bits + ", " + other);
            }
            bits = next;
        }
        line("mov.b32 " + reg(warp.dst()) + ", " + bits);
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
        String addr = addresses.address(a.array(), a.index());
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
            case LOAD -> line("ld" + (a.order() == Insn.Order.RELAXED ? ".relaxed" : ".acquire") + sc + ".global." + memType(t) + " " + d + ", " + addr);
            case STORE -> line("st" + (a.order() == Insn.Order.RELAXED ? ".relaxed" : ".release") + sc + ".global." + memType(t) + " " + addr + ", " + src(a.value()));
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
        w.label(label + "_loop");
        line("mov.b32 " + oldF + ", " + oldBits);
        String m = floats.javaMinMax(a.op() == Insn.AtomicOp.MAX ? BinOp.MAX : BinOp.MIN, IrType.F32, oldF, v);
        line("mov.b32 " + newBits + ", " + m);
        line("setp.eq.b32 " + same + ", " + newBits + ", " + oldBits);
        line("@" + same + " bra " + label + "_done");
        line("atom" + sem + sc + ".global.cas.b32 " + seen + ", " + addr + ", " + oldBits + ", " + newBits);
        String retry = fresh(RegClass.PRED);
        line("setp.ne.b32 " + retry + ", " + seen + ", " + oldBits);
        line("mov.b32 " + oldBits + ", " + seen);
        line("@" + retry + " bra " + label + "_loop");
        w.label(label + "_done");
        line("mov.b32 " + d + ", " + oldBits);
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
                if (t.isFloat()) {
                    throw new IllegalStateException("float min or max reaches the emitter: the lowering writes it out");
                }
                line((b.op() == BinOp.MIN ? "min." : "max.") + s + " " + d + ", " + a + ", " + c);
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
                String h = floats.bf16Round(a);
                line("cvt.s32.s16 " + d + ", " + h);
            }
            case F64_TO_F32_ODD -> floats.roundToOdd(a, d);
        }
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
            // NaN and out-of-range values are selected away by the lowering
            case F2I -> line("cvt.rzi.s32.f32 " + d + ", " + a);
            case F2L -> line("cvt.rzi.s64.f32 " + d + ", " + a);
            case D2I -> line("cvt.rzi.s32.f64 " + d + ", " + a);
            case D2L -> line("cvt.rzi.s64.f64 " + d + ", " + a);
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

    private void emitLoad(Insn.Load l) {
        AdjacentLoads.Group group = merged.group(l).orElse(null);
        if (group != null) {
            String[] lanes = laneRegisters.computeIfAbsent(group, this::emitVectorLoad);
            emitLane(l, lanes[group.lane(l)]);
            return;
        }
        String addr = addresses.address(l.array(), l.index());
        String d = reg(l.dst());
        ElementKind k = l.array().element();
        String ld = accessGuard + globalLoad(l.array());
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

    /** One vector load of a merged group's elements, at its first load: {@code ld.global.v2/.v4} into fresh registers. */
    private String[] emitVectorLoad(AdjacentLoads.Group g) {
        int bytes = g.array().element().bytes();
        RegClass rc = bytes == 2 ? RegClass.B16 : bytes == 4 ? RegClass.B32 : RegClass.B64;
        String[] lanes = new String[g.width()];
        for (int k = 0; k < lanes.length; k++) {
            lanes[k] = fresh(rc);
        }
        String addr = addresses.address(g.array(), g.base(), g.plus());
        line(globalLoad(g.array()) + "v" + g.width() + ".b" + 8 * bytes + " {" + String.join(", ", lanes) + "}, " + addr);
        return lanes;
    }

    /** What {@link #emitLoad} does after its load, from the lane register {@code lane} a vector load filled. */
    private void emitLane(Insn.Load l, String lane) {
        String d = reg(l.dst());
        switch (l.array().element()) {
            case F32, I32 -> line("mov.b32 " + d + ", " + lane);
            case F64, I64 -> line("mov.b64 " + d + ", " + lane);
            case F16, BF16 -> {
                if (l.rawBits()) {
                    line("cvt.s32.s16 " + d + ", " + lane);
                } else if (l.array().element() == ElementKind.F16) {
                    line("cvt.f32.f16 " + d + ", " + lane);
                } else {
                    String x = fresh(RegClass.B32);
                    String y = fresh(RegClass.B32);
                    line("cvt.u32.u16 " + x + ", " + lane);
                    line("shl.b32 " + y + ", " + x + ", 16");
                    line("mov.b32 " + d + ", " + y);
                }
            }
        }
    }

    private void emitStore(Insn.Store s) {
        String v = src(s.value());
        String addr = addresses.address(s.array(), s.index());
        ElementKind k = s.array().element();
        switch (k) {
            case F32 -> line(accessGuard + "st.global.f32 " + addr + ", " + v);
            case F64 -> line(accessGuard + "st.global.f64 " + addr + ", " + v);
            case I32 -> line(accessGuard + "st.global.u32 " + addr + ", " + v);
            case I64 -> line(accessGuard + "st.global.u64 " + addr + ", " + v);
            case F16, BF16 -> {
                String bits = floats.sixteenBits(s, v);
                line(accessGuard + "st.global.b16 " + addr + ", " + bits);
            }
        }
    }
}
