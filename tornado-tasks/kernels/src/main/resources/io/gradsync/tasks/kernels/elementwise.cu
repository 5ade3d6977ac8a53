// The element-wise kernels (ElementwiseKernels), after common.cu.

// copy / sumInto / scale, one set per storage type
#define ELEMENTWISE(SUF, P)                                                                        \
extern "C" __global__ void copy##SUF(ARR(P##_T, out), ARR(const P##_T, in)) {                     \
    GS_LOOP(out_len) { P##_ST(out, i, P##_LD(in, i)); }                                            \
}                                                                                                  \
extern "C" __global__ void sumInto##SUF(ARR(P##_T, acc), ARR(const P##_T, x)) {                   \
    GS_LOOP(acc_len) { P##_ST(acc, i, P##_LD(acc, i) + P##_LD(x, i)); }                           \
}                                                                                                  \
extern "C" __global__ void scale##SUF(ARR(P##_T, x), float s) {                                    \
    GS_LOOP(x_len) { P##_ST(x, i, P##_LD(x, i) * s); }                                             \
}

ELEMENTWISE(, F32)
ELEMENTWISE(Bf16, BF16)
ELEMENTWISE(F16, F16)
