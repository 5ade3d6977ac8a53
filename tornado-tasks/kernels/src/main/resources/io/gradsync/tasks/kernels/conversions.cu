// The conversions (ConversionKernels), after common.cu.

// Conversions: the loop runs over the output's length
extern "C" __global__ void bf16ToF32(ARR(const BF16_T, in), ARR(float, out)) { GS_LOOP(out_len) { out[i] = BF16_LD(in, i); } }
extern "C" __global__ void f32ToBf16(ARR(const float, in), ARR(BF16_T, out)) { GS_LOOP(out_len) { BF16_ST(out, i, in[i]); } }
extern "C" __global__ void f16ToF32(ARR(const F16_T, in), ARR(float, out)) { GS_LOOP(out_len) { out[i] = F16_LD(in, i); } }
extern "C" __global__ void f32ToF16(ARR(const float, in), ARR(F16_T, out)) { GS_LOOP(out_len) { F16_ST(out, i, in[i]); } }
