// CUDA C reference versions of gradsync's built-in kernels (tornado-tasks GradientKernels), for
// `gradsync compare`: built at run time with `nvcc -O3 -cubin -arch=sm_XX` and timed beside the
// PTX that gradsync generates from the Java bytecode. Same names and the same calling convention
// as the generated PTX: each array is a pointer followed by its element count (u32), scalars by
// value, one grid-stride loop over the first array (KernelContext kernels use the global index).
// Arithmetic matches the Java: sums in input order in fp32, 16-bit values widened to fp32 and
// rounded once to nearest even on store; averages sum in fp64 in replica order, divide by the
// replica count k and round once to the storage type (16-bit types through round-to-odd).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <float.h>

#define GS_LOOP(n) for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

// fp32 storage
#define F32_T float
#define F32_LD(p, i) ((p)[i])
#define F32_ST(p, i, v) ((p)[i] = (v))
// bf16 storage (16-bit words)
#define BF16_T __nv_bfloat16
#define BF16_LD(p, i) __bfloat162float((p)[i])
#define BF16_ST(p, i, v) ((p)[i] = __float2bfloat16_rn(v))
// fp16 storage
#define F16_T __half
#define F16_LD(p, i) __half2float((p)[i])
#define F16_ST(p, i, v) ((p)[i] = __float2half_rn(v))

#define ARR(T, name) T* __restrict__ name, unsigned name##_len

// Sum of squares of x[first], x[first + stride], ... in fp64, as the Java squares* helpers: eight
// interleaved running sums over whole groups of eight, the rest into sum 0, added pairwise.
#define SQUARES(SUF, P)                                                                            \
static __device__ __forceinline__ double squares##SUF(const P##_T* __restrict__ x, unsigned n,    \
                                                      unsigned first, unsigned stride) {           \
    unsigned count = first < n ? (unsigned) (((unsigned long long) n - first + stride - 1) / stride) : 0; \
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                        \
    unsigned i = first;                                                                            \
    for (unsigned g = count / 8; g > 0; g--) {                                                     \
        double v[8];                                                                               \
        _Pragma("unroll") for (int j = 0; j < 8; j++) v[j] = P##_LD(x, i + j * stride);            \
        i += 8 * stride;                                                                           \
        _Pragma("unroll") for (int j = 0; j < 8; j++) s[j] += v[j] * v[j];                         \
    }                                                                                              \
    for (unsigned r = count % 8; r > 0; r--) { double v = P##_LD(x, i); i += stride; s[0] += v * v; } \
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));                      \
}
SQUARES(, F32)
SQUARES(Bf16, BF16)
SQUARES(F16, F16)

// copy / sumInto / scale / checkFinite / sumOfSquares(Partials), one set per storage type
#define ELEMENTWISE(SUF, P)                                                                        \
extern "C" __global__ void copy##SUF(ARR(P##_T, out), ARR(const P##_T, in)) {                     \
    GS_LOOP(out_len) { P##_ST(out, i, P##_LD(in, i)); }                                            \
}                                                                                                  \
extern "C" __global__ void sumInto##SUF(ARR(P##_T, acc), ARR(const P##_T, x)) {                   \
    GS_LOOP(acc_len) { P##_ST(acc, i, P##_LD(acc, i) + P##_LD(x, i)); }                           \
}                                                                                                  \
extern "C" __global__ void scale##SUF(ARR(P##_T, x), float s) {                                    \
    GS_LOOP(x_len) { P##_ST(x, i, P##_LD(x, i) * s); }                                             \
}                                                                                                  \
extern "C" __global__ void checkFinite##SUF(ARR(const P##_T, x), ARR(int, flag)) {                \
    GS_LOOP(x_len) { if (!(fabsf(P##_LD(x, i)) <= FLT_MAX)) flag[0] = 1; }                         \
}                                                                                                  \
extern "C" __global__ void sumOfSquares##SUF(ARR(const P##_T, x), ARR(float, result)) {           \
    unsigned first = blockIdx.x * blockDim.x + threadIdx.x;                                        \
    if (first < x_len) atomicAdd(result, (float) squares##SUF(x, x_len, first, gridDim.x * blockDim.x)); \
}                                                                                                  \
extern "C" __global__ void sumOfSquaresPartials##SUF(ARR(const P##_T, x), ARR(double, partials)) {\
    unsigned stride = gridDim.x * blockDim.x;                                                      \
    for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < partials_len; p += stride) {      \
        partials[p] = squares##SUF(x, x_len, p, partials_len);                                     \
    }                                                                                              \
}

ELEMENTWISE(, F32)
ELEMENTWISE(Bf16, BF16)
ELEMENTWISE(F16, F16)

// Second stage of a sum of squares: fp64 partials added down to fewer slots, in slot order
extern "C" __global__ void sumPartials(ARR(const double, x), ARR(double, partials)) {
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < partials_len; p += stride) {
        unsigned count = p < x_len ? (unsigned) (((unsigned long long) x_len - p + partials_len - 1) / partials_len) : 0;
        double acc = 0.0;
        unsigned i = p;
        for (unsigned j = 0; j < count; j++) { acc += x[i]; i += partials_len; }
        partials[p] = acc;
    }
}

// Fused averages of k = 2..8 inputs
#define AVG_SIG2(P) ARR(P##_T, out), ARR(const P##_T, a0), ARR(const P##_T, a1)
#define AVG_SIG3(P) AVG_SIG2(P), ARR(const P##_T, a2)
#define AVG_SIG4(P) AVG_SIG3(P), ARR(const P##_T, a3)
#define AVG_SIG5(P) AVG_SIG4(P), ARR(const P##_T, a4)
#define AVG_SIG6(P) AVG_SIG5(P), ARR(const P##_T, a5)
#define AVG_SIG7(P) AVG_SIG6(P), ARR(const P##_T, a6)
#define AVG_SIG8(P) AVG_SIG7(P), ARR(const P##_T, a7)
#define AVG_SUM2(P) (double) P##_LD(a0, i) + P##_LD(a1, i)
#define AVG_SUM3(P) AVG_SUM2(P) + P##_LD(a2, i)
#define AVG_SUM4(P) AVG_SUM3(P) + P##_LD(a3, i)
#define AVG_SUM5(P) AVG_SUM4(P) + P##_LD(a4, i)
#define AVG_SUM6(P) AVG_SUM5(P) + P##_LD(a5, i)
#define AVG_SUM7(P) AVG_SUM6(P) + P##_LD(a6, i)
#define AVG_SUM8(P) AVG_SUM7(P) + P##_LD(a7, i)
// The double rounded to float towards the odd neighbour when inexact (HalfFloats.roundToOdd): a
// second rounding to bf16/fp16 then gives the once-rounded result.
static __device__ __forceinline__ float roundToOdd(double d) {
    float f = (float) d;
    double back = (double) f;
    if (back == d || d != d) return f;
    int bits = __float_as_int(f);
    if (bits & 1) return f;
    bool away = fabs(back) < fabs(d);
    return __int_as_float(bits + (away ? 1 : -1));
}
#define F32_AVG_ROUND(d) ((float) (d))
#define BF16_AVG_ROUND(d) roundToOdd(d)
#define F16_AVG_ROUND(d) roundToOdd(d)
#define AVERAGE(K, SUF, P)                                                                         \
extern "C" __global__ void average##K##SUF(AVG_SIG##K(P), float k) {                               \
    GS_LOOP(out_len) { P##_ST(out, i, P##_AVG_ROUND((AVG_SUM##K(P)) / k)); }                       \
}
#define AVERAGES(SUF, P) AVERAGE(2, SUF, P) AVERAGE(3, SUF, P) AVERAGE(4, SUF, P) AVERAGE(5, SUF, P) \
    AVERAGE(6, SUF, P) AVERAGE(7, SUF, P) AVERAGE(8, SUF, P)

AVERAGES(, F32)
AVERAGES(Bf16, BF16)
AVERAGES(F16, F16)

// Conversions: the loop runs over the output's length
extern "C" __global__ void bf16ToF32(ARR(const BF16_T, in), ARR(float, out)) { GS_LOOP(out_len) { out[i] = BF16_LD(in, i); } }
extern "C" __global__ void f32ToBf16(ARR(const float, in), ARR(BF16_T, out)) { GS_LOOP(out_len) { BF16_ST(out, i, in[i]); } }
extern "C" __global__ void f16ToF32(ARR(const F16_T, in), ARR(float, out)) { GS_LOOP(out_len) { out[i] = F16_LD(in, i); } }
extern "C" __global__ void f32ToF16(ARR(const float, in), ARR(F16_T, out)) { GS_LOOP(out_len) { F16_ST(out, i, in[i]); } }
