// The reductions (ReductionKernels), after common.cu.

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

// checkFinite / sumOfSquares(Partials), one set per storage type
#define REDUCTIONS(SUF, P)                                                                         \
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

REDUCTIONS(, F32)
REDUCTIONS(Bf16, BF16)
REDUCTIONS(F16, F16)

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
