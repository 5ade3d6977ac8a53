package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.optimize.IndexOffsets;
import io.gradsync.tasks.compiler.ir.Insn;
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
    private final IndexOffsets indexOffsets = new IndexOffsets();

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
        if (index instanceof Const c) {
            long off = (long) c.intValue() * array.element().bytes();
            String base = arrayBase.get(array.name());
            return off == 0 ? "[" + base + "]" : "[" + base + "+" + off + "]";
        }
        IndexOffsets.Offset known = indexOffsets.of((Var) index);
        return address(array, known.base(), known.plus());
    }

    /** The memory operand of {@code array[base + plus]}, {@code plus} (0 to 2^24) as the immediate offset. */
    String address(ArrayParam array, Var base, long plus) {
        int bytes = array.element().bytes();
        String off = fresh(RegClass.B64);
        String addr = fresh(RegClass.B64);
        line("mul.wide.s32 " + off + ", " + reg(base) + ", " + bytes);
        line("add.s64 " + addr + ", " + arrayBase.get(array.name()) + ", " + off);
        return plus != 0 ? "[" + addr + "+" + plus * bytes + "]" : "[" + addr + "]";
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
        indexOffsets.startBlock();
    }

    /** After {@code insn}: what it makes known about an int index, and what it makes stale ({@link IndexOffsets}). */
    void noteIndexOffset(Insn insn) {
        indexOffsets.note(insn);
    }
}
