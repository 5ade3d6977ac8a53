package io.gradsync.tasks.compiler.optimize;

import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.BinOp;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.HashMap;
import java.util.Map;

/**
 * Within one basic block, walked in order: the int variables known to be another variable plus a
 * constant (0 to 2^24), through additions of constants and copies, so that {@code x[i]},
 * {@code x[i + 1]}, ... are seen as one base and their offsets. Assigning a variable forgets what
 * was known about it and every offset from it. One instance per walk; {@link #startBlock} between
 * blocks, as nothing is known across them.
 */
public final class IndexOffsets {
    /** {@code index == base + plus}, both ints. */
    public record Offset(Var base, long plus) {
    }

    private static final long LIMIT = 1 << 24;
    private final Map<Var, Offset> known = new HashMap<>();

    /** A new block: what was known holds only within one block. */
    public void startBlock() {
        known.clear();
    }

    /** The base and constant offset of {@code index} at this point of the walk: itself plus 0 when nothing is known. */
    public Offset of(Var index) {
        Offset o = known.get(index);
        return o != null ? o : new Offset(index, 0);
    }

    /** After {@code insn}: what it makes known, and what it makes stale (offsets from a variable it assigns). */
    public void note(Insn insn) {
        Var d = ElementwiseLoop.def(insn);
        if (d == null) {
            return;
        }
        Offset found = null;
        if (d.type() == IrType.I32) {
            if (insn instanceof Insn.Binary b && b.op() == BinOp.ADD) {
                Operand x = b.a() instanceof Const ? b.b() : b.a();
                Operand c = b.a() instanceof Const ? b.a() : b.b();
                if (x instanceof Var v && c instanceof Const k && k.intValue() >= 0 && k.intValue() <= LIMIT) {
                    Offset via = known.get(v);
                    found = via != null ? new Offset(via.base(), via.plus() + k.intValue()) : new Offset(v, k.intValue());
                    if (found.plus() > LIMIT) {
                        found = null;
                    }
                }
            } else if (insn instanceof Insn.Move m && m.src() instanceof Var v) {
                found = known.get(v);
            }
        }
        known.remove(d);
        known.values().removeIf(o -> o.base().equals(d));
        if (found != null && !found.base().equals(d)) {
            known.put(d, found);
        }
    }
}
