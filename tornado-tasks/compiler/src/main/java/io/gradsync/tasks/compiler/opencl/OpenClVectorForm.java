package io.gradsync.tasks.compiler.opencl;

import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The vectorized form of an element-wise kernel in OpenCL C, as the PTX one
 * ({@code ptx.VectorForm}): each work item takes groups of {@code width} consecutive elements,
 * every array moving 8 or 16 bytes per access as {@code uint2}/{@code uint4} words instead of 2 or
 * 4 bytes, the body written once per element from the same IR in the same order (so the bits are
 * the scalar form's), and the last {@code n % width} elements by the scalar body. The accesses go
 * through vector pointers, which need every array aligned to its access size: the launcher checks
 * the offsets. Kernels with 64-bit arrays have none ({@link #applies}).
 */
final class OpenClVectorForm {
    private final OpenClEmitter e;

    OpenClVectorForm(OpenClEmitter e) {
        this.e = e;
    }

    /** Whether the OpenCL C vector form covers {@code loop}: every array it accesses is 16 or 32 bits wide. */
    static boolean applies(ElementwiseLoop loop) {
        return loop.loaded().stream().allMatch(a -> a.element().bytes() <= 4) && loop.stored().stream().allMatch(a -> a.element().bytes() <= 4);
    }

    void emit(ElementwiseLoop loop) {
        int width = loop.width();
        String index = OpenClEmitter.name(loop.index());
        e.emitPrologue(loop);
        // the prologue started the index at 0 + global id; counters unsigned, as they may pass INT_MAX
        e.line("const uint gs_gid = (uint)" + index + ";");
        e.line("const uint gs_n = (uint)max(" + OpenClEmitter.val(loop.bound()) + ", 0);");
        e.line("const uint gs_groups = gs_n / " + width + "u;");
        e.line("const uint gs_gsize = (uint)get_global_size(0);");
        e.line("for (uint gs_g = gs_gid; gs_g < gs_groups; gs_g += gs_gsize) {");
        e.indent(true);
        Map<String, String> loaded = new LinkedHashMap<>();
        for (ArrayParam a : loop.loaded()) {
            String v = "gs_in_" + a.javaIndex();
            e.line("const " + word(loop, a) + " " + v + " = ((__global const " + word(loop, a) + "*)" + OpenClEmitter.ptr(a) + ")[gs_g];");
            loaded.put(a.name(), v);
        }
        Map<String, String[]> stored = new LinkedHashMap<>();
        for (ArrayParam a : loop.stored()) {
            stored.put(a.name(), new String[width]);
        }
        for (int lane = 0; lane < width; lane++) {
            e.line(index + " = (int)(gs_g * " + width + "u + " + lane + "u);");
            for (Insn insn : loop.body()) {
                switch (insn) {
                    case Insn.Load l -> e.line(OpenClEmitter.name(l.dst()) + " = " + laneLoad(l, lane, loaded.get(l.array().name())) + ";");
                    case Insn.Store s -> {
                        String bits = "gs_st_" + s.array().javaIndex() + "_" + lane;
                        e.line("const uint " + bits + " = " + laneBits(s) + ";");
                        stored.get(s.array().name())[lane] = bits;
                    }
                    default -> e.emitInsn(insn);
                }
            }
        }
        for (ArrayParam a : loop.stored()) {
            String[] lanes = stored.get(a.name());
            int words = loop.accessBytes(a) / 4;
            StringBuilder packed = new StringBuilder("(" + word(loop, a) + ")(");
            for (int w = 0; w < words; w++) {
                packed.append(w > 0 ? ", " : "").append(a.element().bytes() == 2 ? lanes[2 * w] + " | (" + lanes[2 * w + 1] + " << 16)" : lanes[w]);
            }
            e.line("((__global " + word(loop, a) + "*)" + OpenClEmitter.ptr(a) + ")[gs_g] = " + packed + ");");
        }
        e.indent(false);
        e.line("}");
        e.line("for (" + index + " = (int)(gs_groups * " + width + "u + gs_gid); (uint)" + index + " < gs_n; "
                + index + " = (int)((uint)" + index + " + gs_gsize)) {");
        e.indent(true);
        for (Insn insn : loop.body()) {
            e.emitInsn(insn);
        }
        e.indent(false);
        e.line("}");
        e.line("return;");
    }

    /** The vector type of one access of {@code a}: {@code uint4} for 16 bytes, {@code uint2} for 8. */
    private static String word(ElementwiseLoop loop, ArrayParam a) {
        return loop.accessBytes(a) == 16 ? "uint4" : "uint2";
    }

    /** The value the scalar load gives, from lane {@code lane} of the loaded words {@code v}. */
    private static String laneLoad(Insn.Load l, int lane, String v) {
        ElementKind k = l.array().element();
        if (k.bytes() == 4) {
            String w = v + ".s" + lane;
            return k == ElementKind.F32 ? "as_float(" + w + ")" : "as_int(" + w + ")";
        }
        String bits = (lane & 1) == 0 ? "(" + v + ".s" + lane / 2 + " & 0xffffu)" : "(" + v + ".s" + lane / 2 + " >> 16)";
        if (l.rawBits()) {
            return "(int)(short)(ushort)" + bits;
        }
        return k == ElementKind.BF16 ? "as_float(" + bits + " << 16)" : "gs_half_to_f32((int)" + bits + ")";
    }

    /** The bits the scalar store writes, as a uint (16-bit kinds in its low half). */
    private static String laneBits(Insn.Store s) {
        ElementKind k = s.array().element();
        String v = OpenClEmitter.val(s.value());
        if (k.bytes() == 4) {
            return "as_uint(" + v + ")";
        }
        if (s.rawBits()) {
            return "(uint)(ushort)" + v;
        }
        boolean fromDouble = s.value().type() == IrType.F64;
        if (k == ElementKind.BF16) {
            return "(uint)(ushort)" + (fromDouble ? "gs_f64_to_bf16(" : "gs_f32_to_bf16(") + v + ")";
        }
        return "(uint)(ushort)" + (fromDouble ? "gs_f64_to_half(" : "gs_f32_to_half(") + v + ")";
    }
}
