// The fused averages (AverageKernels), into an output and in place into every input, after common.cu.

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

// The same averages written into every input (averageInPlace<k>): each input ends with the mean
#define INPL_SIG2(P) ARR(P##_T, a0), ARR(P##_T, a1)
#define INPL_SIG3(P) INPL_SIG2(P), ARR(P##_T, a2)
#define INPL_SIG4(P) INPL_SIG3(P), ARR(P##_T, a3)
#define INPL_SIG5(P) INPL_SIG4(P), ARR(P##_T, a4)
#define INPL_SIG6(P) INPL_SIG5(P), ARR(P##_T, a5)
#define INPL_SIG7(P) INPL_SIG6(P), ARR(P##_T, a6)
#define INPL_SIG8(P) INPL_SIG7(P), ARR(P##_T, a7)
#define INPL_ST2(P) P##_ST(a0, i, m); P##_ST(a1, i, m)
#define INPL_ST3(P) INPL_ST2(P); P##_ST(a2, i, m)
#define INPL_ST4(P) INPL_ST3(P); P##_ST(a3, i, m)
#define INPL_ST5(P) INPL_ST4(P); P##_ST(a4, i, m)
#define INPL_ST6(P) INPL_ST5(P); P##_ST(a5, i, m)
#define INPL_ST7(P) INPL_ST6(P); P##_ST(a6, i, m)
#define INPL_ST8(P) INPL_ST7(P); P##_ST(a7, i, m)
#define AVERAGE_IN_PLACE(K, SUF, P)                                                                \
extern "C" __global__ void averageInPlace##K##SUF(INPL_SIG##K(P), float k) {                       \
    GS_LOOP(a0_len) { float m = P##_AVG_ROUND((AVG_SUM##K(P)) / k); INPL_ST##K(P); }               \
}
#define AVERAGES_IN_PLACE(SUF, P) AVERAGE_IN_PLACE(2, SUF, P) AVERAGE_IN_PLACE(3, SUF, P)          \
    AVERAGE_IN_PLACE(4, SUF, P) AVERAGE_IN_PLACE(5, SUF, P) AVERAGE_IN_PLACE(6, SUF, P)            \
    AVERAGE_IN_PLACE(7, SUF, P) AVERAGE_IN_PLACE(8, SUF, P)

AVERAGES_IN_PLACE(, F32)
AVERAGES_IN_PLACE(Bf16, BF16)
AVERAGES_IN_PLACE(F16, F16)
