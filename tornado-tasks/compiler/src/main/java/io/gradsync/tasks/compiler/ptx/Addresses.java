package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.MemArray;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.HashMap;
import java.util.Map;

/**
 * Memory operands: each array parameter's base register and length, {@code [base + index * size]}
 * for array parameters and in-kernel arrays, and the immediate-offset folding that gives
 * {@code x[i]}, {@code x[i + 1]}, ... one address register. An index the block computed as another
 * int plus a constant (0 to 2^24) takes that int's address with the constant as the immediate
 * offset: the two differ only where {@code i + c} overflows, an index out of range either way.
 */
final class Addresses extends PtxPart {
    private final String kernelName;
    private final Map<String, String> arrayBase = new HashMap<>();
    private final Map<String, String> arrayLen = new HashMap<>();
    /** In the block being emitted: int variables known to be another one plus a constant (see {@link #address}). */
    private final Map<Var, IndexOffset> indexOffsets = new HashMap<>();

    private record IndexOffset(Var base, long plus) {
    }

    Addresses(PtxWriter w, String kernelName) {
        super(w);
        this.kernelName = kernelName;
    }

    /** Records the registers holding an array parameter's global base address and its length. */
    void bind(ArrayParam a, String base, String length) {
        arrayBase.put(a.name(), base);
        arrayLen.put(a.name(), length);
    }

    String base(ArrayParam a) {
        return arrayBase.get(a.name());
    }

    String length(ArrayParam a) {
        return arrayLen.get(a.name());
    }

    /** {@code <kernel>_a<id>}: an in-kernel array's name, the kernel's prefix keeping tables of a module's kernels apart. */
    String name(MemArray m) {
        return kernelName + "_" + switch (m.space()) {
            case PRIVATE -> "a";
            case GROUP -> "s";
            case TABLE -> "t";
        } + m.id();
    }

    /** The state space an in-kernel array lives in. */
    static String space(MemArray m) {
        return switch (m.space()) {
            case PRIVATE -> "local";
            case GROUP -> "shared";
            case TABLE -> "const";
        };
    }

    /** The memory operand {@code [..]} of {@code array[index]}. */
    String address(ArrayParam array, Operand index) {
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

    /** The memory operand of {@code m[index]}. */
    String memAddress(MemArray m, Operand index) {
        String name = name(m);
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

    /** A new block: what was known about indices holds only within one block. */
    void startBlock() {
        indexOffsets.clear();
    }

    /**
     * After {@code insn}: what it makes known about an int index (its result is another int plus a
     * constant, or a copy of such), and what it makes stale (offsets from a variable it assigns).
     */
    void noteIndexOffset(Insn insn) {
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
}
