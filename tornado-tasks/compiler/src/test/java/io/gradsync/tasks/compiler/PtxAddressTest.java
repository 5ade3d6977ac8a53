package io.gradsync.tasks.compiler;

import io.gradsync.tasks.compiler.testing.*;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.compiler.testing.Ptxas;
import org.junit.jupiter.api.Test;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code x[i + c]} for a constant {@code c >= 0} takes {@code x[i]}'s address and an immediate offset; other indices do not. */
class PtxAddressTest {

    public static void neighbours(KernelContext ctx, FloatArray x, FloatArray y) {
        int i = ctx.globalIdx();
        if (i >= 1 && i + 3 < x.getSize()) {
            int j = i + 1;
            y.set(i, x.get(i) + x.get(j) + x.get(j + 2) + x.get(i - 1));
        }
    }

    @Test
    void constantOffsetsBecomeImmediates() throws Exception {
        String ptx = new KernelCompiler().compile(PtxAddressTest.class, "neighbours").ptx(90);
        // x[i + 1] (through j) and x[i + 3] (j + 2, composed): 4 and 12 bytes past x[i]'s address
        assertTrue(ptx.contains("+4];"), ptx);
        assertTrue(ptx.contains("+12];"), ptx);
        // x[i - 1] is not folded: i - 1 wraps where Java's index does not
        assertFalse(ptx.contains("+-"), ptx);
        Matcher loads = Pattern.compile("ld\\.global\\.f32").matcher(ptx);
        int count = 0;
        while (loads.find()) {
            count++;
        }
        assertEquals(4, count, ptx);
        if (Ptxas.available()) {
            Ptxas.assemble(ptx, 90);
        }
    }

    @Test
    void assemblesWherePtxasIs() throws Exception {
        assumeTrue(Ptxas.available(), "ptxas is not on the PATH: skipped");
        Ptxas.assemble(new KernelCompiler().compile(PtxAddressTest.class, "neighbours").ptx(75), 75);
    }
}
