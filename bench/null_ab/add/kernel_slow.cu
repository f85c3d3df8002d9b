// Power kernel (bench/null_ab.py --mode power): kernel_a.cu's add, made slower by a calibrated 3.3 %: the block that
// finishes last reads the time since the first block started (%globaltimer) and spins for 3.3 % of it more, so the
// kernel's own duration is 1.033x the add's at every size (the launch's own cost, ~2 us, is not stretched: at ~5 us
// per call the whole call is ~2 % slower, at >= 20 us ~3 %; bench/null_ab.py reports the ratio the executors' events
// measured). Check 11 must call kernel_a a new leader against this kernel. With one block per 256 float4s (the
// grid before 2026-12-03) the per-block atomics made it 14-19 % slower on the H200, not 3.3 %: the grid is capped.
#include <algorithm>
#include <cstdint>

namespace {
constexpr double kExtra = 0.033;
constexpr int64_t kMaxBlocks = 1024;  // kernel_a.cu's grid: two atomics per block stay ~1 us at most
__device__ unsigned long long g_start = ~0ull;
__device__ unsigned g_done = 0;

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void add(const float4* a, const float4* b, float4* c, const float* as, const float* bs, float* cs, int64_t n4, int64_t n) {
  if (threadIdx.x == 0) atomicMin(&g_start, now_ns());
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n - 4 * n4) cs[4 * n4 + t] = as[4 * n4 + t] + bs[4 * n4 + t];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&g_done, 1u) == gridDim.x - 1) {  // the last block: every other one has finished its work
      const unsigned long long t1 = now_ns(), t0 = atomicAdd(&g_start, 0ull);
      const unsigned long long until = t1 + static_cast<unsigned long long>(kExtra * static_cast<double>(t1 - t0));
      while (now_ns() < until) {
      }
      g_start = ~0ull;  // ready for the next call (the stream runs calls one after another)
      g_done = 0;
      __threadfence();
    }
  }
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  const int64_t n4 = N / 4;
  const int64_t blocks = std::min(kMaxBlocks, (std::max<int64_t>(n4, 4) + 255) / 256);
  add<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b),
                                                         reinterpret_cast<float4*>(c), a, b, c, n4, N);
}
