// GPU check for generated PTX, for machines without a JVM (see GpuCaseWriter).
//
//   ptxrun check DIR   loads DIR/module.ptx with cuModuleLoadData, runs every case of
//                      DIR/cases.txt (inputs and JVM-reference outputs written by GpuCaseWriter)
//                      and compares bit for bit (NaN equals NaN); prints one line per case.
//   ptxrun bench DIR   times the generated average kernels against the same kernels compiled by
//                      nvcc -O3 and against a copy, on 256 MiB per buffer.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); \
    fprintf(stderr, "%s failed: %s (line %d)\n", #x, s_, __LINE__); exit(2); } } while (0)
#define RK(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { \
    fprintf(stderr, "%s failed: %s (line %d)\n", #x, cudaGetErrorString(r_), __LINE__); exit(2); } } while (0)

static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) { fprintf(stderr, "cannot read %s\n", path.c_str()); exit(2); }
    std::stringstream ss; ss << in.rdbuf(); return ss.str();
}

struct Buf { std::string in, expect, mode; long count; int elemBytes; CUdeviceptr dev; };

static bool sameElem(const char* a, const char* b, int bytes, const std::string& mode, long i, std::string& why) {
    if (mode == "f32") {
        float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4);
        if (std::isnan(x) && std::isnan(y)) return true;
        if (memcmp(&x, &y, 4) == 0) return true;
        char m[200]; snprintf(m, sizeof m, "at %ld expected %.9g got %.9g", i, x, y); why = m; return false;
    }
    if (mode == "f32ulp") {
        float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4);
        if (x == y || (std::isnan(x) && std::isnan(y)) || fabsf(x - y) <= fabsf(nextafterf(x, INFINITY) - x)) return true;
        char m[200]; snprintf(m, sizeof m, "at %ld expected %.9g got %.9g (1 ulp)", i, x, y); why = m; return false;
    }
    if (mode == "f32rel") {
        float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4);
        if (fabs(x - y) <= 1e-4 * fabs(x)) return true;
        char m[200]; snprintf(m, sizeof m, "at %ld expected %.9g got %.9g (rel 1e-4)", i, x, y); why = m; return false;
    }
    if (mode == "h16" || mode == "b16") {
        unsigned short x, y; memcpy(&x, a, 2); memcpy(&y, b, 2);
        bool nx = mode == "h16" ? ((x & 0x7c00) == 0x7c00 && (x & 0x3ff)) : ((x & 0x7f80) == 0x7f80 && (x & 0x7f));
        bool ny = mode == "h16" ? ((y & 0x7c00) == 0x7c00 && (y & 0x3ff)) : ((y & 0x7f80) == 0x7f80 && (y & 0x7f));
        if ((nx && ny) || x == y) return true;
        char m[200]; snprintf(m, sizeof m, "at %ld expected 0x%04x got 0x%04x", i, x, y); why = m; return false;
    }
    if (memcmp(a, b, bytes) == 0) return true;
    char m[200]; snprintf(m, sizeof m, "at %ld bytes differ", i); why = m; return false;
}

static int check(const std::string& dir) {
    std::string ptx = slurp(dir + "/module.ptx");
    CUmodule mod;
    char log[8192] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, (void*)(size_t)sizeof log};
    CUresult r = cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS) { fprintf(stderr, "cuModuleLoadDataEx: %d %s\n", r, log); return 2; }
    std::ifstream cases(dir + "/cases.txt");
    std::string line; int failed = 0, total = 0;
    while (std::getline(cases, line)) {
        std::istringstream ls(line); std::string tag; ls >> tag;
        if (tag != "CASE") continue;
        std::string name, entry; unsigned grid, block; ls >> name >> entry >> grid >> block;
        CUfunction fn; CK(cuModuleGetFunction(&fn, mod, entry.c_str()));
        std::vector<Buf> bufs; std::vector<std::vector<char>> scalars; std::vector<int> order; // 0 buf, 1 scalar
        while (std::getline(cases, line) && line != "END") {
            std::istringstream as(line); std::string kind; as >> kind;
            if (kind == "BUF") {
                Buf b; as >> b.in >> b.count >> b.elemBytes >> b.expect >> b.mode;
                std::string data = slurp(dir + "/" + b.in);
                CK(cuMemAlloc(&b.dev, data.size() ? data.size() : 4));
                CK(cuMemcpyHtoD(b.dev, data.data(), data.size()));
                bufs.push_back(b); order.push_back(0);
            } else {
                std::vector<char> v(8, 0);
                if (kind == "I32") { int x; as >> x; memcpy(v.data(), &x, 4); }
                else if (kind == "F32") { unsigned x; as >> std::hex >> x; memcpy(v.data(), &x, 4); }
                scalars.push_back(v); order.push_back(1);
            }
        }
        std::vector<void*> params; std::vector<int> lens(bufs.size());
        size_t bi = 0, si = 0;
        for (int o : order) {
            if (o == 0) { lens[bi] = (int)bufs[bi].count; params.push_back(&bufs[bi].dev); params.push_back(&lens[bi]); bi++; }
            else { params.push_back(scalars[si++].data()); }
        }
        CK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params.data(), nullptr));
        CK(cuCtxSynchronize());
        std::string why; bool ok = true;
        for (auto& b : bufs) {
            if (b.expect == "-") continue;
            std::string exp = slurp(dir + "/" + b.expect);
            std::vector<char> got(exp.size());
            CK(cuMemcpyDtoH(got.data(), b.dev, exp.size()));
            for (long i = 0; i < b.count && ok; i++) {
                ok = sameElem(exp.data() + i * b.elemBytes, got.data() + i * b.elemBytes, b.elemBytes, b.mode, i, why);
            }
            if (!ok) { why = b.in + " " + why; break; }
        }
        for (auto& b : bufs) CK(cuMemFree(b.dev));
        total++;
        if (!ok) failed++;
        printf("%-4s %s %s\n", ok ? "ok" : "FAIL", name.c_str(), why.c_str());
    }
    printf("%d of %d cases passed\n", total - failed, total);
    return failed ? 1 : 0;
}

// ---- bandwidth: generated PTX vs nvcc -O3 -------------------------------------------------------

template <int K>
__global__ void avg_nvcc(float* out, int n, const float* const* in, float invK) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float s = in[0][i];
#pragma unroll
        for (int j = 1; j < K; j++) s += in[j][i];
        out[i] = s * invK;
    }
}

__global__ void copy_nvcc(float* out, const float* in, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i];
}

template <int K>
static float timeNvcc(float* out, int n, float** d_in, unsigned grid, unsigned block, int reps) {
    cudaEvent_t a, b; RK(cudaEventCreate(&a)); RK(cudaEventCreate(&b));
    float invK = 1.0f / K;
    avg_nvcc<K><<<grid, block>>>(out, n, d_in, invK);
    RK(cudaEventRecord(a));
    for (int r = 0; r < reps; r++) avg_nvcc<K><<<grid, block>>>(out, n, d_in, invK);
    RK(cudaEventRecord(b)); RK(cudaEventSynchronize(b));
    float ms; RK(cudaEventElapsedTime(&ms, a, b)); return ms / reps;
}

static int bench(const std::string& dir) {
    RK(cudaFree(0));
    std::string ptx = slurp(dir + "/module.ptx");
    CUmodule mod; CK(cuModuleLoadData(&mod, ptx.c_str()));
    const int n = 64 << 20; // 256 MiB of floats per buffer
    const int reps = 20;
    const unsigned block = 256;
    float* bufs[9];
    for (int i = 0; i < 9; i++) { RK(cudaMalloc(&bufs[i], (size_t)n * 4)); RK(cudaMemset(bufs[i], 0, (size_t)n * 4)); }
    float** d_in; RK(cudaMalloc(&d_in, 8 * sizeof(float*)));
    RK(cudaMemcpy(d_in, bufs + 1, 8 * sizeof(float*), cudaMemcpyHostToDevice));
    int sms; RK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaEvent_t a, b; RK(cudaEventCreate(&a)); RK(cudaEventCreate(&b));
    float ms;
    // copy bandwidth (read + write), kernel and cudaMemcpy
    unsigned fullGrid = (n + block - 1) / block;
    copy_nvcc<<<fullGrid, block>>>(bufs[0], bufs[1], n);
    RK(cudaEventRecord(a)); for (int r = 0; r < reps; r++) copy_nvcc<<<fullGrid, block>>>(bufs[0], bufs[1], n);
    RK(cudaEventRecord(b)); RK(cudaEventSynchronize(b)); RK(cudaEventElapsedTime(&ms, a, b));
    double copyBw = 2.0 * n * 4 / (ms / reps * 1e-3) / 1e9;
    RK(cudaEventRecord(a)); for (int r = 0; r < reps; r++) RK(cudaMemcpy(bufs[0], bufs[1], (size_t)n * 4, cudaMemcpyDeviceToDevice));
    RK(cudaEventRecord(b)); RK(cudaEventSynchronize(b)); RK(cudaEventElapsedTime(&ms, a, b));
    double memcpyBw = 2.0 * n * 4 / (ms / reps * 1e-3) / 1e9;
    printf("copy kernel %.1f GB/s, cudaMemcpy D2D %.1f GB/s (read+write)\n", copyBw, memcpyBw);
    printf("%-10s %-8s %12s %12s %12s %9s %9s\n", "kernel", "grid", "ours GB/s", "nvcc GB/s", "ours/nvcc", "ours/copy", "");
    for (int k = 2; k <= 8; k++) {
        char name[32]; snprintf(name, sizeof name, "average%d", k);
        CUfunction fn; CK(cuModuleGetFunction(&fn, mod, name));
        for (unsigned grid : {fullGrid, (unsigned)sms * 8}) {
            std::vector<CUdeviceptr> ptrs(k + 1); std::vector<int> lens(k + 1, n); float invK = 1.0f / k;
            std::vector<void*> params;
            for (int j = 0; j <= k; j++) { ptrs[j] = (CUdeviceptr)bufs[j]; params.push_back(&ptrs[j]); params.push_back(&lens[j]); }
            params.push_back(&invK);
            CK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params.data(), nullptr));
            RK(cudaEventRecord(a));
            for (int r = 0; r < reps; r++) CK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params.data(), nullptr));
            RK(cudaEventRecord(b)); RK(cudaEventSynchronize(b)); RK(cudaEventElapsedTime(&ms, a, b));
            double ours = (k + 1.0) * n * 4 / (ms / reps * 1e-3) / 1e9;
            float nv;
            switch (k) {
                case 2: nv = timeNvcc<2>(bufs[0], n, d_in, grid, block, reps); break;
                case 3: nv = timeNvcc<3>(bufs[0], n, d_in, grid, block, reps); break;
                case 4: nv = timeNvcc<4>(bufs[0], n, d_in, grid, block, reps); break;
                case 5: nv = timeNvcc<5>(bufs[0], n, d_in, grid, block, reps); break;
                case 6: nv = timeNvcc<6>(bufs[0], n, d_in, grid, block, reps); break;
                case 7: nv = timeNvcc<7>(bufs[0], n, d_in, grid, block, reps); break;
                default: nv = timeNvcc<8>(bufs[0], n, d_in, grid, block, reps); break;
            }
            double theirs = (k + 1.0) * n * 4 / (nv * 1e-3) / 1e9;
            printf("%-10s %-8u %12.1f %12.1f %12.3f %9.3f\n", name, grid, ours, theirs, ours / theirs, ours / copyBw);
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 3) { fprintf(stderr, "usage: ptxrun check|bench DIR\n"); return 2; }
    CK(cuInit(0));
    CUdevice dev; CK(cuDeviceGet(&dev, 0));
    CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
    std::string mode = argv[1];
    return mode == "check" ? check(argv[2]) : bench(argv[2]);
}
