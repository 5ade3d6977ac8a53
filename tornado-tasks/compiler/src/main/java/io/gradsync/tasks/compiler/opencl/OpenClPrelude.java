package io.gradsync.tasks.compiler.opencl;

import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.KernelIr;

import java.util.List;

/**
 * The helper functions an OpenCL C program starts with: the 16-bit float conversions, the
 * atomics, and Java's float max and min inside them and the warp reduction, as C functions the
 * emitted kernels call. Each optional part is included only where a kernel needs it: the f64 and 64-bit atomics
 * parts enable extensions that not every device has.
 */
final class OpenClPrelude {
    private static final String PREAMBLE = """
            #pragma OPENCL FP_CONTRACT OFF

            /* Java Math.min/max for the atomics' and the warp reduction's loops (elsewhere the lowering writes them out). */
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
            /*
             * Atomic float add (relaxed, device scope). OpenCL 1.2 has none: NVIDIA's OpenCL takes its PTX
             * instruction inline (GS_PTX_ATOMICS, set by the runtime there); elsewhere a compare-and-swap
             * loop on the bits, which thousands of contending groups serialize.
             */
            #ifdef GS_PTX_ATOMICS
            static inline void gs_atomic_add_f32(volatile __global float* p, float v) {
                asm volatile("red.global.add.f32 [%0], %1;" :: "l"(p), "f"(v) : "memory");
            }
            #else
            static inline void gs_atomic_add_f32(volatile __global float* p, float v) {
                volatile __global uint* u = (volatile __global uint*)p;
                uint old = *u;
                while (1) {
                    uint seen = atomic_cmpxchg(u, old, as_uint(as_float(old) + v));
                    if (seen == old) return;
                    old = seen;
                }
            }
            #endif
            """;

    /** The atomics of {@link Insn.Atomic} on int and float (32-bit, core OpenCL 1.2). */
    private static final String PREAMBLE_ATOMICS = """
            static inline int gs_atomic_load_i(volatile __global int* p) { return *p; }
            static inline int gs_atomic_xchg_i(volatile __global int* p, int v) { return atomic_xchg(p, v); }
            static inline int gs_atomic_cmpxchg_i(volatile __global int* p, int e, int v) { return atomic_cmpxchg(p, e, v); }
            static inline int gs_atomic_add_i(volatile __global int* p, int v) { return atomic_add(p, v); }
            static inline int gs_atomic_max_i(volatile __global int* p, int v) { return atomic_max(p, v); }
            static inline int gs_atomic_min_i(volatile __global int* p, int v) { return atomic_min(p, v); }
            static inline float gs_atomic_load_f(volatile __global float* p) { return *p; }
            static inline float gs_atomic_xchg_f(volatile __global float* p, float v) { return atomic_xchg(p, v); }
            static inline float gs_atomic_cmpxchg_f(volatile __global float* p, float e, float v) {
                return as_float(atomic_cmpxchg((volatile __global uint*)p, as_uint(e), as_uint(v)));
            }
            /* read-modify-write of a float by compare-and-swap on its bits; op 0 add, 1 max, 2 min (Java's) */
            static inline float gs_atomic_update_f(volatile __global float* p, float v, int op) {
                volatile __global uint* u = (volatile __global uint*)p;
                uint old = *u;
                while (1) {
                    float o = as_float(old);
                    float n = op == 0 ? o + v : op == 1 ? gs_maxf(o, v) : gs_minf(o, v);
                    if (as_uint(n) == old) return o;
                    uint seen = atomic_cmpxchg(u, old, as_uint(n));
                    if (seen == old) return o;
                    old = seen;
                }
            }
            #ifdef GS_PTX_ATOMICS
            static inline float gs_atomic_add_f(volatile __global float* p, float v) {
                float old;
                asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(p), "f"(v) : "memory");
                return old;
            }
            #else
            static inline float gs_atomic_add_f(volatile __global float* p, float v) { return gs_atomic_update_f(p, v, 0); }
            #endif
            static inline float gs_atomic_max_f(volatile __global float* p, float v) { return gs_atomic_update_f(p, v, 1); }
            static inline float gs_atomic_min_f(volatile __global float* p, float v) { return gs_atomic_update_f(p, v, 2); }
            """;

    /** The same on long, through the 64-bit atomics extensions. */
    private static final String PREAMBLE_ATOMICS_64 = """
            #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
            #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
            static inline long gs_atomic_load_l(volatile __global long* p) { return atom_add(p, 0L); }
            static inline long gs_atomic_xchg_l(volatile __global long* p, long v) { return atom_xchg(p, v); }
            static inline long gs_atomic_cmpxchg_l(volatile __global long* p, long e, long v) { return atom_cmpxchg(p, e, v); }
            static inline long gs_atomic_add_l(volatile __global long* p, long v) { return atom_add(p, v); }
            static inline long gs_atomic_max_l(volatile __global long* p, long v) { return atom_max(p, v); }
            static inline long gs_atomic_min_l(volatile __global long* p, long v) { return atom_min(p, v); }
            """;

    private static final String PREAMBLE_F64 = """
            #pragma OPENCL EXTENSION cl_khr_fp64 : enable
            /*
             * double -> float rounded to odd: the odd one of the two floats around d, d itself where it is
             * a float (NaN stays NaN). From the nearest float: PoCL's convert_float_rtz is slow.
             */
            static inline float gs_round_to_odd(double d) {
                float f = (float)d;
                double back = (double)f;
                uint b = as_uint(f);
                uint odd = fabs(back) > fabs(d) ? b - 1u : b + 1u;
                return back == d || isnan(d) || (b & 1u) ? f : as_float(odd);
            }
            static inline int gs_f64_to_half(double d) {
                ushort h;
                vstore_half_rte(d, 0, (__private half*)&h);
                return (int)(short)h;
            }
            """;

    /** After {@link #PREAMBLE}, whose float rounding it may take. */
    private static final String PREAMBLE_F64_TO_BF16 = """
            /* double -> bf16 bits (sign-extended), rounded once to nearest even: one PTX instruction where
               the runtime says the GPU has it, else through the float rounded to odd (the same bits). */
            #ifdef GS_PTX_CVT_BF16
            static inline int gs_f64_to_bf16(double d) {
                uint r;
                asm("{ .reg .b16 t; cvt.rn.bf16.f64 t, %1; cvt.u32.u16 %0, t; }" : "=r"(r) : "d"(d));
                return (int)(short)(ushort)r;
            }
            #else
            static inline int gs_f64_to_bf16(double d) { return gs_f32_to_bf16(gs_round_to_odd(d)); }
            #endif
            """;

    private OpenClPrelude() {
    }

    /** The prelude of a program holding {@code kernels}. */
    static String forKernels(List<KernelIr> kernels) {
        StringBuilder b = new StringBuilder();
        if (kernels.stream().anyMatch(KernelIr::usesF64)) {
            b.append(PREAMBLE_F64);
        }
        b.append(PREAMBLE);
        if (kernels.stream().anyMatch(KernelIr::usesF64)) {
            b.append(PREAMBLE_F64_TO_BF16);
        }
        if (kernels.stream().anyMatch(k -> uses(k, a -> true))) {
            b.append(PREAMBLE_ATOMICS);
        }
        if (kernels.stream().anyMatch(k -> uses(k, a -> a.array().element() == ElementKind.I64))) {
            b.append(PREAMBLE_ATOMICS_64);
        }
        return b.toString();
    }

    private static boolean uses(KernelIr k, java.util.function.Predicate<Insn.Atomic> which) {
        return k.blocks().stream().flatMap(b -> b.insns().stream()).anyMatch(i -> i instanceof Insn.Atomic a && which.test(a));
    }
}
