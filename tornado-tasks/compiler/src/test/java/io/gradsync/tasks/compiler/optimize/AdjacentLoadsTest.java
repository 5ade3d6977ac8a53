package io.gradsync.tasks.compiler.optimize;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.Var;
import io.gradsync.tasks.compiler.testing.Ptxas;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which loads the vector form of a kernel that is not element-wise merges ({@link AdjacentLoads}):
 * adjacent elements from a proven multiple of the group's width, of an array the kernel never
 * writes, with no write, barrier or new base between them; and the PTX it makes of them.
 */
class AdjacentLoadsTest {

    public static void quads(KernelContext ctx, Bfloat16Array x, IntArray out) {
        int e = 4 * ctx.globalIdx();
        if (e + 3 < x.getSize()) {
            out.set(ctx.globalIdx(), x.getBits(e) + x.getBits(e + 1) + x.getBits(e + 2) + x.getBits(e + 3));
        }
    }

    /** Pairs from {@code 2 * q}, stepping by {@code 2 * half} in a loop: the step keeps the factor. */
    public static void pairsInALoop(KernelContext ctx, Bfloat16Array x, FloatArray out, int half) {
        float s = 0;
        for (int e = 2 * ctx.globalIdx(); e + 1 < x.getSize(); e += 2 * half) {
            s += x.get(e) * x.get(e + 1);
        }
        out.set(ctx.globalIdx(), s);
    }

    /** {@code 2q + 1, 2q + 2}: adjacent, but from an odd index. */
    public static void oddStart(KernelContext ctx, Bfloat16Array x, IntArray out) {
        int e = 2 * ctx.globalIdx() + 1;
        if (e + 1 < x.getSize()) {
            out.set(ctx.globalIdx(), x.getBits(e) + x.getBits(e + 1));
        }
    }

    /** An index of unknown factor: nothing to prove it even. */
    public static void unknownStart(KernelContext ctx, Bfloat16Array x, IntArray out, int first) {
        int e = first + ctx.globalIdx();
        if (e + 1 < x.getSize()) {
            out.set(ctx.globalIdx(), x.getBits(e) + x.getBits(e + 1));
        }
    }

    /** A store between the two loads (it might write x's memory through another array). */
    public static void storeBetween(KernelContext ctx, Bfloat16Array x, IntArray out) {
        int e = 2 * ctx.globalIdx();
        if (e + 1 < x.getSize()) {
            int a = x.getBits(e);
            out.set(ctx.globalIdx(), a);
            out.set(ctx.globalIdx(), a + x.getBits(e + 1));
        }
    }

    /** The kernel writes x itself. */
    public static void writesTheArray(KernelContext ctx, Bfloat16Array x) {
        int e = 2 * ctx.globalIdx();
        if (e + 1 < x.getSize()) {
            x.setBits(e, (short) (x.getBits(e) + x.getBits(e + 1)));
        }
    }

    /** The base takes a new value between the loads: {@code x[e]}, then {@code x[e' + 1]} of another {@code e'}. */
    public static void newBaseBetween(KernelContext ctx, Bfloat16Array x, IntArray out, int shift) {
        int e = 2 * ctx.globalIdx();
        if (e + 3 < x.getSize()) {
            int a = x.getBits(e);
            e = 2 * (ctx.globalIdx() + shift);
            out.set(ctx.globalIdx(), a + x.getBits(e + 1));
        }
    }

    /** 32- and 64-bit elements: four floats in 16 bytes, two doubles in 16. */
    public static void widerElements(KernelContext ctx, FloatArray f, DoubleArray d, DoubleArray out) {
        int e = 4 * ctx.globalIdx();
        if (e + 3 < f.getSize() && e + 1 < d.getSize()) {
            out.set(ctx.globalIdx(), f.get(e) + f.get(e + 1) + f.get(e + 2) + f.get(e + 3) + d.get(e) + d.get(e + 1));
        }
    }

    private static CompiledKernel compile(String name) {
        return new KernelCompiler().compile(AdjacentLoadsTest.class, name);
    }

    private static long count(String ptx, String prefix) {
        return ptx.lines().map(String::trim).filter(l -> l.startsWith(prefix)).count();
    }

    private static String vectorForm(CompiledKernel k) throws Exception {
        String ptx = k.ptx(90, Set.of(), true);
        if (Ptxas.available()) {
            Ptxas.assemble(ptx, 90);
        }
        return ptx;
    }

    @Test
    void quadsFromAMultipleOfFourAreOneEightByteLoad() throws Exception {
        CompiledKernel k = compile("quads");
        assertTrue(k.hasVectorForm());
        assertEquals(Map.of("x", 8), KernelIrs.adjacentLoads(k).alignments());
        String ptx = vectorForm(k);
        assertEquals(1, count(ptx, "ld.global.v4.b16 "), ptx);
        assertEquals(0, count(ptx, "ld.global.s16 "), ptx);
        assertTrue(ptx.contains(".align 8 quads_p1_x_ptr"), ptx);
        assertEquals(4, count(k.ptx(90), "ld.global.s16 "), "the scalar form keeps its four loads");
    }

    @Test
    void pairsInALoopKeepTheirFactor() throws Exception {
        CompiledKernel k = compile("pairsInALoop");
        assertEquals(Map.of("x", 4), KernelIrs.adjacentLoads(k).alignments());
        String ptx = vectorForm(k);
        assertEquals(1, count(ptx, "ld.global.v2.b16 "), ptx);
        assertEquals(2, ptx.lines().filter(l -> l.contains("shl.b32") && l.trim().endsWith(", 16;")).count(),
                "each lane widened from bf16 as a scalar load is: " + ptx);
    }

    @Test
    void widerElementsTakeSixteenBytes() throws Exception {
        CompiledKernel k = compile("widerElements");
        assertEquals(Map.of("f", 16, "d", 16), KernelIrs.adjacentLoads(k).alignments());
        String ptx = vectorForm(k);
        assertEquals(1, count(ptx, "ld.global.v4.b32 "), ptx);
        assertEquals(1, count(ptx, "ld.global.v2.b64 "), ptx);
    }

    @Test
    void nothingIsMergedWithoutProofOrWithAWriteOrNewBaseBetween() {
        for (String name : new String[]{"oddStart", "unknownStart", "storeBetween", "writesTheArray", "newBaseBetween"}) {
            CompiledKernel k = compile(name);
            assertTrue(KernelIrs.adjacentLoads(k).isEmpty(), name);
            assertFalse(k.hasVectorForm(), name);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> k.ptx(90, Set.of(), true), name);
            assertTrue(e.getMessage().contains("no vector form"), e.getMessage());
        }
    }

    /** The power of two proven to divide each kernel's {@code e}, over every value it takes. */
    @Test
    void divisibilityFollowsArithmetic() {
        assertEquals(2, divisibilityOf("quads", "e"), "4 * q");
        assertEquals(1, divisibilityOf("pairsInALoop", "e"), "2 * q, then + 2 * half each round");
        assertEquals(0, divisibilityOf("oddStart", "e"), "2 * q + 1");
        assertEquals(0, divisibilityOf("unknownStart", "e"), "a parameter plus q");
    }

    private static int divisibilityOf(String kernel, String local) {
        Map<Var, Integer> known = AdjacentLoads.divisibility(KernelIrs.ir(compile(kernel)));
        return known.entrySet().stream().filter(en -> en.getKey().hint().equals(local)).mapToInt(Map.Entry::getValue)
                .min().orElseThrow(() -> new AssertionError("no variable " + local + " in " + known.keySet()));
    }
}
