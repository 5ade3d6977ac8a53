package io.gradsync.tasks.compiler.optimize;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Insn;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A kernel written with a helper compiles as the same kernel written out: no copies, the same PTX, still element-wise. */
class CopyPropagationTest {
    private static final KernelCompiler COMPILER = new KernelCompiler();

    private static double weighted(int n, int i, FloatArray a, FloatArray b, FloatArray c, float w) {
        double s = (double) a.get(i) * w + b.get(i);
        return n > 2 ? s + c.get(i) : s;
    }

    public static void withHelper(FloatArray out, FloatArray a, FloatArray b, float w) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) weighted(2, i, a, b, a, w));
        }
    }

    public static void writtenOut(FloatArray out, FloatArray a, FloatArray b, float w) {
        for (@Parallel int i = 0; i < out.getSize(); i++) {
            out.set(i, (float) ((double) a.get(i) * w + b.get(i)));
        }
    }

    private static String body(CompiledKernel k) {
        // everything after the entry's parameter list, without the comments that name the method
        String ptx = k.ptx(90);
        return ptx.substring(ptx.indexOf(".reg")).lines().filter(l -> !l.startsWith("//")).reduce("", (x, y) -> x + y + "\n")
                .replace("withHelper", "K").replace("writtenOut", "K");
    }

    @Test
    void aHelperCompilesAsItsBodyWrittenOut() {
        CompiledKernel helper = COMPILER.compile(CopyPropagationTest.class, "withHelper");
        CompiledKernel plain = COMPILER.compile(CopyPropagationTest.class, "writtenOut");
        assertTrue(helper.isElementwise(), "the helper's loads are at the loop index itself");
        assertEquals(plain.vectorWidth(), helper.vectorWidth());
        assertEquals(body(plain), body(helper));
        List<Insn> insns = KernelIrs.ir(helper).blocks().stream().map(Block::insns).flatMap(List::stream).toList();
        assertEquals(0, insns.stream().filter(i -> i instanceof Insn.Move m && m.src() instanceof io.gradsync.tasks.compiler.ir.Var).count(),
                "copies left: " + insns);
    }
}
