// CUDA C reference versions of gradsync's built-in kernels, for `gradsync compare`: this file, then
// one file per kernel family beside it (averages.cu, elementwise.cu, conversions.cu, reductions.cu,
// each next to its Java class: KernelFamily), built at run time as one source with
// `nvcc -O3 -cubin -arch=sm_XX` and timed beside the PTX that gradsync generates from the Java
// bytecode. Same names and the same calling convention as the generated PTX: each array is a
// pointer followed by its element count (u32), scalars by value, one grid-stride loop over the
// first array (KernelContext kernels use the global index). Arithmetic matches the Java: sums in
// input order in fp32, 16-bit values widened to fp32 and rounded once to nearest even on store;
// averages sum in fp64 in replica order, divide by the replica count k and round once to the
// storage type (16-bit types through round-to-odd).
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
