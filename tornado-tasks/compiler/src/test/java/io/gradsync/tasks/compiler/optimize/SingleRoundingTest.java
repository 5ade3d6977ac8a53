package io.gradsync.tasks.compiler.optimize;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.IrType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A double rounded to odd and stored to a 16-bit array becomes one store of the double, which the
 * back ends round once (one instruction from sm_90); a rounded float read anywhere else stays.
 * That the bits are the same is checked where the kernels run: the built-in averages against
 * Java in the PTX interpreter, on PoCL and on the GPU.
 */
public class SingleRoundingTest {

    public static void folded(Bfloat16Array b, HalfArray h, DoubleArray in) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            b.set(i, HalfFloats.roundToOdd(in.get(i)));
            h.set(i, HalfFloats.roundToOdd(in.get(i) * 3));
        }
    }

    public static void kept(Bfloat16Array b, FloatArray f, DoubleArray in) {
        for (@Parallel int i = 0; i < in.getSize(); i++) {
            float odd = HalfFloats.roundToOdd(in.get(i));
            b.set(i, odd);
            f.set(i, odd); // read twice: the float itself is needed
        }
    }

    private static List<Insn> insns(String kernel) {
        var ir = KernelIrs.ir(new KernelCompiler().compile(SingleRoundingTest.class, kernel));
        return ir.blocks().stream().map(Block::insns).flatMap(List::stream).toList();
    }

    private static long odd(List<Insn> insns) {
        return insns.stream().filter(i -> i instanceof Insn.Unary u && u.op() == Insn.UnOp.F64_TO_F32_ODD).count();
    }

    private static long count(String text, String prefix) {
        return text.lines().map(String::trim).filter(l -> l.startsWith(prefix)).count();
    }

    @Test
    void aRoundingToOddStoredTo16BitsIsOneStoreOfTheDouble() {
        List<Insn> insns = insns("folded");
        assertEquals(0, odd(insns));
        assertEquals(2, insns.stream().filter(i -> i instanceof Insn.Store s && s.value().type() == IrType.F64).count());
        var k = new KernelCompiler().compile(SingleRoundingTest.class, "folded");
        String sm90 = k.ptx(90);
        assertEquals(1, count(sm90, "cvt.rn.bf16.f64 "));
        assertEquals(1, count(sm90, "cvt.rn.f16.f64 "));
        assertEquals(0, count(sm90, "cvt.rz.f32.f64 "));
        String sm80 = k.ptx(80); // no 16-bit conversion from a double before sm_90: through the float rounded to odd
        assertEquals(2, count(sm80, "cvt.rz.f32.f64 "));
        assertEquals(1, count(sm80, "cvt.rn.bf16.f32 "));
        assertEquals(1, count(sm80, "cvt.rn.f16.f32 "));
        String cl = k.openCl();
        // bf16 through one helper: one PTX instruction on NVIDIA's GPUs from sm_90, else the float rounded to odd
        assertEquals(2, cl.split("= \\(ushort\\)gs_f64_to_bf16\\(", -1).length, cl);
        assertTrue(cl.contains("return gs_f32_to_bf16(gs_round_to_odd(d));"), cl);
        assertTrue(cl.contains("cvt.rn.bf16.f64"), cl);
        assertTrue(!cl.contains("vstore_half_rte(gs_round_to_odd("), cl); // fp16 straight from the double
    }

    @Test
    void aRoundedFloatReadTwiceStays() {
        List<Insn> insns = insns("kept");
        assertEquals(1, odd(insns));
        assertTrue(insns.stream().noneMatch(i -> i instanceof Insn.Store s && s.value().type() == IrType.F64));
        String sm90 = new KernelCompiler().compile(SingleRoundingTest.class, "kept").ptx(90);
        assertEquals(1, count(sm90, "cvt.rz.f32.f64 "));
        assertEquals(1, count(sm90, "cvt.rn.bf16.f32 "));
    }

    @Test
    void nvidiasGpusFromSm90RoundADoubleToBf16InPtx() {
        String bf16 = io.gradsync.tasks.compiler.opencl.OpenClEmitter.BUILD_OPTION_PTX_BF16;
        assertTrue(io.gradsync.tasks.compiler.CompiledKernel.openClBuildOptions(false, true, true).contains(bf16));
        assertTrue(!io.gradsync.tasks.compiler.CompiledKernel.openClBuildOptions(false, true, false).contains(bf16));
        assertTrue(!io.gradsync.tasks.compiler.CompiledKernel.openClBuildOptions(true, false, true).contains(bf16)); // PoCL
    }
}
