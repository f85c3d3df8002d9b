// CUDA calibration (calibrate.hpp): D2D copy bandwidth and cuBLAS matrix rates on one GPU.
// Needs CUDA::cublas on the executable that compiles this file.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

#include "khive/judge/calibrate.hpp"

namespace khive {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("calibrate_cuda: ") + what + ": " + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e));
}
void ck(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("calibrate_cuda: ") + what + ": " + cublasGetStatusName(s) + ": " +
                             cublasGetStatusString(s));
}

// RAII holders: every exit path (an exception included) releases what was taken.
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }
  void reset() {
    if (p) cudaFree(p);
    p = nullptr;
  }
  // false (and the sticky-free error cleared) when out of memory; throws on any other error.
  bool alloc(std::size_t bytes) {
    reset();
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      p = nullptr;
      return false;
    }
    ck(e, "cudaMalloc");
    return true;
  }
};
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  ~Stream() { cudaStreamDestroy(s); }
};
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    ck(cudaEventCreate(&start), "cudaEventCreate");
    ck(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};
struct Blas {
  cublasHandle_t h = nullptr;
  Blas() { ck(cublasCreate(&h), "cublasCreate"); }
  ~Blas() { cublasDestroy(h); }
};

// Seconds of one call of f() on stream s, timed with events.
template <class F>
double time_once(cudaStream_t s, EventPair& ev, F&& f) {
  ck(cudaEventRecord(ev.start, s), "cudaEventRecord");
  f();
  ck(cudaEventRecord(ev.stop, s), "cudaEventRecord");
  ck(cudaEventSynchronize(ev.stop), "cudaEventSynchronize");
  float ms = 0;
  ck(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
  return ms * 1e-3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Random non-zero values: |v| in [0.25, 1), random sign (splitmix64 of the index and a seed).
__device__ inline float random_nonzero(std::size_t i, uint64_t seed) {
  uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  return (z & 1 ? 1.0f : -1.0f) * (0.25f + 0.75f * u);
}
__device__ inline void store(float* p, float v) { *p = v; }
__device__ inline void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ inline void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

template <class T>
__global__ void fill_random(T* p, std::size_t n, uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    store(p + i, random_nonzero(i, seed));
}

template <class T>
void fill(void* p, std::size_t n, uint64_t seed, cudaStream_t s) {
  fill_random<T><<<1024, 256, 0, s>>>(static_cast<T*>(p), n, seed);
  ck(cudaGetLastError(), "fill_random launch");
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct GemmKind {
  ComputeUnit unit;
  const char* label;
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
  int elem_size;
};

}  // namespace

HardwareProfile calibrate_cuda(int device, double seconds_budget) {
  const auto t0 = Clock::now();
  const double budget = seconds_budget > 0 ? seconds_budget : 20.0;
  ck(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");

  HardwareProfile p;
  p.name = prop.name;
  std::string notes = "khive calibrate_cuda " + utc_now() + ": device " + std::to_string(device) + " '" + prop.name +
                      "' (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                      std::to_string(prop.multiProcessorCount) + " SMs)";
  std::vector<std::string> skipped;

  Stream stream;
  EventPair ev;

  // ---- copy bandwidth: D2D cudaMemcpyAsync, best of 10 after 2 warm-ups, bytes = read + write.
  {
    DeviceBuffer src, dst;
    std::size_t size = std::size_t{2} << 30;
    while (size >= (std::size_t{256} << 20) && !(src.alloc(size) && dst.alloc(size))) {
      src.reset();
      size /= 2;
    }
    if (!src.p || !dst.p) throw std::runtime_error("calibrate_cuda: cannot allocate two 256 MiB buffers");
    ck(cudaMemsetAsync(src.p, 0x5a, size, stream.s), "cudaMemsetAsync");
    ck(cudaMemsetAsync(dst.p, 0, size, stream.s), "cudaMemsetAsync");
    auto copy = [&] { ck(cudaMemcpyAsync(dst.p, src.p, size, cudaMemcpyDeviceToDevice, stream.s), "cudaMemcpyAsync"); };
    for (int i = 0; i < 2; ++i) copy();
    ck(cudaStreamSynchronize(stream.s), "cudaStreamSynchronize");
    double best = 1e30;
    for (int i = 0; i < 10; ++i) best = std::min(best, time_once(stream.s, ev, copy));
    p.measured_bandwidth = 2.0 * static_cast<double>(size) / best;
    notes += "; copy D2D " + std::to_string(size >> 20) +
             " MiB best of 10: " + fmt("%.3f", p.measured_bandwidth / 1e12) + " TB/s (read + write)";
  }

  // ---- matrix rates: cublasGemmEx, TN, median of 10 after 3 warm-ups, best of the shapes.
  Blas blas;
  ck(cublasSetStream(blas.h, stream.s), "cublasSetStream");
  // Default math: no TF32 unless the compute type asks for it (CUBLAS_COMPUTE_32F stays true fp32).
  ck(cublasSetMathMode(blas.h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  DeviceBuffer workspace;
  const std::size_t ws_bytes = std::size_t{32} << 20;  // cuBLAS's recommendation for Hopper
  if (workspace.alloc(ws_bytes)) ck(cublasSetWorkspace(blas.h, workspace.p, ws_bytes), "cublasSetWorkspace");

  const GemmKind kinds[] = {
      {ComputeUnit::tc_bf16, "bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2},
      {ComputeUnit::tc_fp16, "fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2},
      {ComputeUnit::tc_tf32, "tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4},
      {ComputeUnit::fp32, "fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4},  // CUDA cores, no TF32
  };
  const int shapes[] = {8192, 4096};
  const int nmax = shapes[0];
  const std::size_t elems = static_cast<std::size_t>(nmax) * nmax;
  DeviceBuffer A, B, C;
  if (!A.alloc(elems * 4) || !B.alloc(elems * 4) || !C.alloc(elems * 4))
    throw std::runtime_error("calibrate_cuda: cannot allocate 3 x 256 MiB for the GEMMs");

  std::string rates;
  for (const GemmKind& k : kinds) {
    if (k.elem_size == 2) {
      if (k.ab == CUDA_R_16BF) {
        fill<__nv_bfloat16>(A.p, elems, 1, stream.s);
        fill<__nv_bfloat16>(B.p, elems, 2, stream.s);
      } else {
        fill<__half>(A.p, elems, 1, stream.s);
        fill<__half>(B.p, elems, 2, stream.s);
      }
    } else {
      fill<float>(A.p, elems, 1, stream.s);
      fill<float>(B.p, elems, 2, stream.s);
    }
    ck(cudaMemsetAsync(C.p, 0, elems * 4, stream.s), "cudaMemsetAsync");
    double best_rate = 0;
    std::string per_shape;
    for (int n : shapes) {
      const double flops = 2.0 * n * static_cast<double>(n) * n;
      const float alpha = 1.0f, beta = 0.0f;
      auto gemm = [&] {
        // Column-major C(n x n) = A^T B with A, B stored n x n: the TN layout.
        ck(cublasGemmEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, A.p, k.ab, n, B.p, k.ab, n, &beta, C.p, k.c,
                        n, k.compute, CUBLAS_GEMM_DEFAULT),
           "cublasGemmEx");
      };
      // The first warm-up, timed (it includes cuBLAS's one-time setup, so it over-estimates): the other 12
      // calls at this shape must fit in the budget.
      const double first = time_once(stream.s, ev, gemm);
      if (seconds_since(t0) + 12 * first > budget) {
        skipped.push_back(std::string(k.label) + " " + std::to_string(n) + "^3");
        continue;
      }
      for (int i = 0; i < 2; ++i) gemm();
      ck(cudaStreamSynchronize(stream.s), "cudaStreamSynchronize");
      std::vector<double> t;
      for (int i = 0; i < 10; ++i) t.push_back(time_once(stream.s, ev, gemm));
      const double rate = flops / median(t);
      best_rate = std::max(best_rate, rate);
      per_shape += (per_shape.empty() ? "" : ", ") + std::to_string(n) + "^3 " + fmt("%.1f", rate / 1e12);
    }
    if (best_rate > 0) p.measured_flops[k.unit] = best_rate;
    rates +=
        std::string(rates.empty() ? "" : ", ") + k.label + " " + fmt("%.1f", best_rate / 1e12) + " (" + per_shape + ")";
  }
  int cublas_version = 0;
  cublasGetVersion(blas.h, &cublas_version);
  notes += "; cuBLAS " + std::to_string(cublas_version) +
           " GemmEx TN, random non-zero data, median of 10 after 3 warm-ups, best of two shapes: " + rates + " TFLOP/s";
  if (!skipped.empty()) {
    notes += "; skipped (over the " + fmt("%.0f", budget) + " s budget):";
    for (const auto& s : skipped) notes += " " + s;
  }

  // ---- peaks: the datasheet when the device is known, else 1.1 x measured.
  if (std::optional<HardwareProfile> b = builtin_profile(p.name)) {
    p.peak_flops = b->peak_flops;
    p.peak_bandwidth = b->peak_bandwidth;
    notes += "; peaks: builtin datasheet for '" + p.name + "'";
    std::string raised;
    for (const auto& [u, r] : p.measured_flops)
      if (r > p.peak_flops[u]) {
        p.peak_flops[u] = r;
        raised += " " + std::string(compute_unit_name(u));
      }
    if (p.measured_bandwidth > p.peak_bandwidth) {
      p.peak_bandwidth = p.measured_bandwidth;
      raised += " bandwidth";
    }
    if (!raised.empty()) notes += " (measured above the datasheet, peak raised to the measurement:" + raised + ")";
  } else {
    for (const auto& [u, r] : p.measured_flops) p.peak_flops[u] = 1.1 * r;
    p.peak_bandwidth = 1.1 * p.measured_bandwidth;
    notes += "; peaks: 1.1 x measured (no builtin datasheet for this device; fp8/int8/fp64 unknown)";
  }
  p.source = notes;
  return p;
}

}  // namespace khive
