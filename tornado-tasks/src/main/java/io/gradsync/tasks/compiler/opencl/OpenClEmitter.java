package io.gradsync.tasks.compiler.opencl;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.Insn.Cond;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.List;

/**
 * Emits OpenCL C (1.2) for kernels in {@link KernelIr}.
 *
 * <p>Control flow is emitted as labels and {@code goto} between basic blocks: javac's control flow
 * is reducible and every OpenCL C compiler (clang based) accepts {@code goto}, so no structuring
 * pass is needed for correctness; the device compiler rebuilds the loops. Java semantics are kept
 * where C differs: int arithmetic wraps (done in unsigned), shift counts are masked, float to int
 * conversion saturates with NaN to 0, {@code Math.min/max} propagate NaN and order -0 before +0,
 * float compares keep Java's NaN behaviour, fp contraction is off. Float division and sqrt are
 * IEEE only when the program is built with {@link #BUILD_OPTIONS_IEEE_DIV_SQRT} (the built-in
 * gradient kernels use neither).
 *
 * <p>Calling convention (OpenCL passes buffers, not pointers): each array parameter becomes three
 * arguments, the buffer ({@code <name>_base}), the element offset of the array in it
 * ({@code <name>_off}, int) and the element count ({@code <name>_len}, int), so a slice of a
 * buffer is passed without sub-buffers; scalars by value; no KernelContext.
 */
public final class OpenClEmitter {
    /** Build option making f32 division and sqrt correctly rounded, as in Java. */
    public static final String BUILD_OPTIONS_IEEE_DIV_SQRT = "-cl-fp32-correctly-rounded-divide-sqrt";

    private static final String PREAMBLE = """
            #pragma OPENCL FP_CONTRACT OFF

            /* Java Math.min/max: NaN if either is NaN, -0.0 below +0.0. */
            static inline float gs_minf(float a, float b) {
                if (isnan(a) || isnan(b)) return a + b;
                if (a == b) return as_float(as_uint(a) | as_uint(b));
                return a < b ? a : b;
            }
            static inline float gs_maxf(float a, float b) {
                if (isnan(a) || isnan(b)) return a + b;
                if (a == b) return as_float(as_uint(a) & as_uint(b));
                return a > b ? a : b;
            }
            /* float -> bf16 bits (sign-extended), round to nearest even; NaN stays a quiet NaN. */
            static inline int gs_f32_to_bf16(float f) {
                uint u = as_uint(f);
                if ((u & 0x7fffffffu) > 0x7f800000u) return (int)(short)(ushort)((u >> 16) | 0x40u);
                return (int)(short)(ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
            }
            static inline float gs_half_to_f32(int bits) {
                ushort h = (ushort)bits;
                return vload_half(0, (const __private half*)&h);
            }
            static inline int gs_f32_to_half(float f) {
                ushort h;
                vstore_half_rte(f, 0, (__private half*)&h);
                return (int)(short)h;
            }
            /* Atomic float add by compare-and-swap on the bits (OpenCL 1.2 has no float atomics). */
            static inline void gs_atomic_add_f32(volatile __global float* p, float v) {
                volatile __global uint* u = (volatile __global uint*)p;
                uint old = *u;
                while (1) {
                    uint seen = atomic_cmpxchg(u, old, as_uint(as_float(old) + v));
                    if (seen == old) return;
                    old = seen;
                }
            }
            """;

    private static final String PREAMBLE_F64 = """
            #pragma OPENCL EXTENSION cl_khr_fp64 : enable
            static inline double gs_mind(double a, double b) {
                if (isnan(a) || isnan(b)) return a + b;
                if (a == b) return as_double(as_ulong(a) | as_ulong(b));
                return a < b ? a : b;
            }
            static inline double gs_maxd(double a, double b) {
                if (isnan(a) || isnan(b)) return a + b;
                if (a == b) return as_double(as_ulong(a) & as_ulong(b));
                return a > b ? a : b;
            }
            """;

    private final StringBuilder out = new StringBuilder();

    private OpenClEmitter() {
    }

    /** A complete OpenCL C program holding the given kernels. */
    public static String program(List<KernelIr> kernels, String comment) {
        StringBuilder b = new StringBuilder("/* ").append(comment).append(" */\n");
        if (kernels.stream().anyMatch(KernelIr::usesF64)) {
            b.append(PREAMBLE_F64);
        }
        b.append(PREAMBLE);
        for (KernelIr k : kernels) {
            b.append('\n').append(new OpenClEmitter().emit(k));
        }
        return b.toString();
    }

    // ------------------------------------------------------------------------------------------

    private static String ctype(IrType t) {
        return switch (t) {
            case I32 -> "int";
            case I64 -> "long";
            case F32 -> "float";
            case F64 -> "double";
        };
    }

    private static String name(Var v) {
        String h = v.hint();
        return (h.isEmpty() ? "v" : h + "_") + v.id();
    }

    private static String ptr(ArrayParam a) {
        return a.name() + "_ptr";
    }

    private static String literal(Const c) {
        return switch (c.type()) {
            case I32 -> c.intValue() == Integer.MIN_VALUE ? "(-2147483647-1)" : paren(Integer.toString(c.intValue()));
            case I64 -> c.bits() == Long.MIN_VALUE ? "(-9223372036854775807L-1L)" : paren(c.bits() + "L");
            case F32 -> {
                float f = c.floatValue();
                yield Float.isNaN(f) ? "NAN" : Float.isInfinite(f) ? (f > 0 ? "INFINITY" : "(-INFINITY)") : paren(Float.toString(f) + "f");
            }
            case F64 -> {
                double d = c.doubleValue();
                yield Double.isNaN(d) ? "((double)NAN)" : Double.isInfinite(d) ? (d > 0 ? "((double)INFINITY)" : "((double)-INFINITY)")
                        : paren(Double.toString(d));
            }
        };
    }

    private static String paren(String s) {
        return s.startsWith("-") ? "(" + s + ")" : s;
    }

    private static String val(Operand o) {
        return o instanceof Var v ? name(v) : literal((Const) o);
    }

    private void line(String s) {
        out.append("    ").append(s).append('\n');
    }

    private static String label(Block b) {
        return "B" + b.id();
    }

    private String emit(KernelIr k) {
        out.append("/* ").append(k.source()).append(" */\n");
        out.append("__kernel void ").append(k.name()).append('(');
        StringBuilder params = new StringBuilder();
        StringBuilder init = new StringBuilder();
        for (KernelParam p : k.params()) {
            switch (p) {
                case ArrayParam a -> {
                    String elem = switch (a.element()) {
                        case F32 -> "float";
                        case F64 -> "double";
                        case I32 -> "int";
                        case I64 -> "long";
                        case F16 -> "half";
                        case BF16 -> "ushort";
                    };
                    params.append("__global ").append(elem).append("* ").append(a.name()).append("_base, const int ")
                            .append(a.name()).append("_off, const int ").append(a.name()).append("_len, ");
                    init.append("    __global ").append(elem).append("* ").append(ptr(a)).append(" = ")
                            .append(a.name()).append("_base + ").append(a.name()).append("_off;\n");
                }
                case KernelParam.ScalarParam s -> {
                    params.append("const ").append(ctype(s.type())).append(' ').append(s.name()).append(", ");
                    init.append("    ").append(name(s.var())).append(" = ").append(s.name()).append(";\n");
                }
                case KernelParam.ContextParam c -> {
                }
            }
        }
        if (!params.isEmpty()) {
            params.setLength(params.length() - 2);
        }
        out.append(params).append(") {\n");
        for (Var v : k.vars()) {
            line(ctype(v.type()) + " " + name(v) + ";");
        }
        out.append(init);
        List<Block> blocks = k.blocks();
        for (int i = 0; i < blocks.size(); i++) {
            Block b = blocks.get(i);
            Block next = i + 1 < blocks.size() ? blocks.get(i + 1) : null;
            out.append(label(b)).append(":;\n");
            for (Insn insn : b.insns()) {
                emitInsn(insn);
            }
            emitTerminator(b.terminator(), next);
        }
        out.append("}\n");
        return out.toString();
    }

    private void emitTerminator(Insn.Terminator t, Block next) {
        switch (t) {
            case Insn.Jump j -> {
                if (j.target() != next) {
                    line("goto " + label(j.target()) + ";");
                }
            }
            case Insn.Return r -> line("return;");
            case Insn.Branch br -> {
                String cond = condition(br);
                if (br.ifTrue() == next) {
                    line("if (!" + cond + ") goto " + label(br.ifFalse()) + ";");
                } else {
                    line("if " + cond + " goto " + label(br.ifTrue()) + ";");
                    if (br.ifFalse() != next) {
                        line("goto " + label(br.ifFalse()) + ";");
                    }
                }
            }
        }
    }

    private static String condition(Insn.Branch br) {
        String a = val(br.a());
        String b = val(br.b());
        String op = switch (br.cond()) {
            case EQ -> "==";
            case NE -> "!=";
            case LT -> "<";
            case GE -> ">=";
            case GT -> ">";
            case LE -> "<=";
        };
        String plain = "(" + a + " " + op + " " + b + ")";
        if (!br.a().type().isFloat()) {
            return plain;
        }
        boolean cNanResult = br.cond() == Cond.NE;
        if (br.unorderedTaken() == cNanResult) {
            return plain;
        }
        if (br.unorderedTaken()) {
            return "(" + a + " " + op + " " + b + " || isnan(" + a + ") || isnan(" + b + "))";
        }
        return "(" + a + " != " + b + " && !isnan(" + a + ") && !isnan(" + b + "))";
    }

    private void emitInsn(Insn insn) {
        switch (insn) {
            case Insn.Move m -> line(name(m.dst()) + " = " + val(m.src()) + ";");
            case Insn.Binary b -> line(name(b.dst()) + " = " + binary(b) + ";");
            case Insn.Unary u -> line(name(u.dst()) + " = " + unary(u) + ";");
            case Insn.Fma f -> line(name(f.dst()) + " = fma(" + val(f.a()) + ", " + val(f.b()) + ", " + val(f.c()) + ");");
            case Insn.Convert c -> line(name(c.dst()) + " = " + convert(c) + ";");
            case Insn.Compare3 c -> {
                String a = val(c.a());
                String b = val(c.b());
                String three = "(" + a + " < " + b + " ? -1 : (" + a + " > " + b + " ? 1 : 0))";
                if (c.a().type().isFloat()) {
                    three = "((isnan(" + a + ") || isnan(" + b + ")) ? " + c.nanResult() + " : " + three + ")";
                }
                line(name(c.dst()) + " = " + three + ";");
            }
            case Insn.Load l -> line(name(l.dst()) + " = " + load(l) + ";");
            case Insn.Store s -> line(store(s) + ";");
            case Insn.AtomicAdd a -> {
                String at = "&" + ptr(a.array()) + "[" + val(a.index()) + "]";
                line(a.value().type() == IrType.F32 ? "gs_atomic_add_f32(" + at + ", " + val(a.value()) + ");"
                        : "atomic_add(" + at + ", " + val(a.value()) + ");");
            }
            case Insn.ArrayLength l -> line(name(l.dst()) + " = " + l.array().name() + "_len;");
            case Insn.Thread t -> line(name(t.dst()) + " = (int)" + switch (t.query()) {
                case GLOBAL_IDX -> "get_global_id(0)";
                case GLOBAL_SIZE -> "get_global_size(0)";
                case LOCAL_IDX -> "get_local_id(0)";
                case GROUP_IDX -> "get_group_id(0)";
                case LOCAL_SIZE -> "get_local_size(0)";
            } + ";");
            case Insn.Terminator t -> throw new IllegalStateException("terminator inside a block");
        }
    }

    private static String binary(Insn.Binary b) {
        IrType t = b.dst().type();
        String a = val(b.a());
        String c = val(b.b());
        if (t.isFloat()) {
            String d = t == IrType.F32 ? "f" : "d";
            return switch (b.op()) {
                case ADD -> a + " + " + c;
                case SUB -> a + " - " + c;
                case MUL -> a + " * " + c;
                case DIV -> a + " / " + c;
                case MIN -> "gs_min" + d + "(" + a + ", " + c + ")";
                case MAX -> "gs_max" + d + "(" + a + ", " + c + ")";
                default -> throw new IllegalStateException(b.op() + " on " + t);
            };
        }
        boolean wide = t == IrType.I64;
        String u = wide ? "(ulong)" : "(uint)";
        String as = wide ? "as_long" : "as_int";
        String mask = wide ? "63" : "31";
        return switch (b.op()) {
            case ADD -> as + "(" + u + a + " + " + u + c + ")";
            case SUB -> as + "(" + u + a + " - " + u + c + ")";
            case MUL -> as + "(" + u + a + " * " + u + c + ")";
            case DIV -> a + " / " + c;
            case REM -> a + " % " + c;
            case AND -> a + " & " + c;
            case OR -> a + " | " + c;
            case XOR -> a + " ^ " + c;
            case SHL -> as + "(" + u + a + " << (" + c + " & " + mask + "))";
            case SHR -> a + " >> (" + c + " & " + mask + ")";
            case USHR -> as + "(" + u + a + " >> (" + c + " & " + mask + "))";
            case MIN -> "min(" + a + ", " + c + ")";
            case MAX -> "max(" + a + ", " + c + ")";
        };
    }

    private static String unary(Insn.Unary u) {
        String a = val(u.a());
        IrType t = u.a().type();
        return switch (u.op()) {
            case NEG -> t.isFloat() ? "-" + a : (t == IrType.I64 ? "as_long(0UL - (ulong)" : "as_int(0u - (uint)") + a + ")";
            case ABS -> t.isFloat() ? "fabs(" + a + ")" : (t == IrType.I64 ? "as_long(abs(" : "as_int(abs(") + a + "))";
            case SQRT -> "sqrt(" + a + ")";
            case EXP -> "exp(" + a + ")";
            case BITCAST -> "as_" + ctype(u.dst().type()) + "(" + a + ")";
            case BF16_BITS_TO_F32 -> "as_float(((uint)" + a + " & 0xffffu) << 16)";
            case F32_TO_BF16_BITS -> "gs_f32_to_bf16(" + a + ")";
            case HALF_BITS_TO_F32 -> "gs_half_to_f32(" + a + ")";
            case F32_TO_HALF_BITS -> "gs_f32_to_half(" + a + ")";
        };
    }

    private static String convert(Insn.Convert c) {
        String a = val(c.src());
        return switch (c.op()) {
            case I2L -> "(long)" + a;
            case L2I -> "as_int((uint)" + a + ")";
            case I2F, L2F, D2F -> "(float)" + a;
            case I2D, L2D, F2D -> "(double)" + a;
            case F2I, D2I -> "convert_int_sat_rtz(" + a + ")";
            case F2L, D2L -> "convert_long_sat_rtz(" + a + ")";
            case I2B -> "(int)(char)" + a;
            case I2S -> "(int)(short)" + a;
            case I2C -> "(" + a + " & 0xffff)";
        };
    }

    private static String load(Insn.Load l) {
        ArrayParam a = l.array();
        String i = val(l.index());
        ElementKind k = a.element();
        if (l.rawBits()) {
            return "(int)((__global short*)" + ptr(a) + ")[" + i + "]";
        }
        return switch (k) {
            case F16 -> "vload_half(" + i + ", " + ptr(a) + ")";
            case BF16 -> "as_float((uint)" + ptr(a) + "[" + i + "] << 16)";
            default -> ptr(a) + "[" + i + "]";
        };
    }

    private static String store(Insn.Store s) {
        ArrayParam a = s.array();
        String i = val(s.index());
        String v = val(s.value());
        if (s.rawBits()) {
            return "((__global short*)" + ptr(a) + ")[" + i + "] = (short)" + v;
        }
        return switch (a.element()) {
            case F16 -> "vstore_half_rte(" + v + ", " + i + ", " + ptr(a) + ")";
            case BF16 -> ptr(a) + "[" + i + "] = (ushort)gs_f32_to_bf16(" + v + ")";
            default -> ptr(a) + "[" + i + "] = " + v;
        };
    }
}
