package io.gradsync.tasks.compiler.optimize;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.IrType;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** After the optimization stage no instruction computes only constants, and what it computed is Java's result. */
public class ConstantFoldingTest {

    /** Called with constants: once inlined, each of its instructions has constant operands. */
    private static long mix(int a, long b, float f, double d) {
        return (a * 7 - (a >> 3) + (a >>> 29)) % 5 + (b << 40) / 3 + (long) (f * 1e12f) + (int) d + (short) a + (char) -a + Math.max(a, 9);
    }

    public static void constants(IntArray in, LongArray out, FloatArray fout) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            out.set(i, mix(-123457, 0x1234_5678_9aL, 3.25f, -7.9e9) + in.get(i));
            fout.set(i, Math.min(-0f, 0f) + (float) (1e40 * 2.0) + in.get(i));
        }
    }

    /** Every constant an instruction reads (a folded value is read where it is used, its move dropped). */
    public static Stream<Const> constantsRead(List<Insn> insns) {
        return insns.stream().flatMap(i -> ElementwiseLoop.uses(i).stream()).filter(Const.class::isInstance).map(Const.class::cast);
    }

    @Test
    void noInstructionOfConstantsIsLeftAndTheResultIsJavas() {
        var ir = KernelIrs.ir(new KernelCompiler().compile(ConstantFoldingTest.class, "constants"));
        List<Insn> insns = ir.blocks().stream().map(Block::insns).flatMap(List::stream).toList();
        for (Insn insn : insns) {
            boolean allConstant = switch (insn) {
                case Insn.Binary b -> b.a() instanceof Const && b.b() instanceof Const;
                case Insn.Convert c -> c.src() instanceof Const;
                case Insn.Select s -> s.a() instanceof Const && s.b() instanceof Const;
                default -> false;
            };
            assertTrue(!allConstant, "left unfolded: " + insn);
        }
        long expected = mix(-123457, 0x1234_5678_9aL, 3.25f, -7.9e9);
        assertTrue(constantsRead(insns).anyMatch(c -> c.type() == IrType.I64 && c.bits() == expected), "mix(...) folded to Java's " + expected);
        float f = Math.min(-0f, 0f) + (float) (1e40 * 2.0);
        assertTrue(constantsRead(insns).anyMatch(c -> c.type() == IrType.F32 && c.floatValue() == f), "the float constant folded: " + f);
    }
}
