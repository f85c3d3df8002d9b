// softmax candidate (CUDA): one 256-thread block per row, three sweeps: block max (warp shuffles, then
// one value per warp through shared memory), block sum of exp(x - max) the same way, then the scaled
// write. Rows of any length; threads past the end of a short row contribute -inf / 0.
namespace {
constexpr int kThreads = 256;

template <bool kMax>
__device__ float block_reduce(float v, float* smem) {
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? smem[lane] : (kMax ? -INFINITY : 0.0f);
    for (int off = 16; off > 0; off >>= 1) {
      const float o = __shfl_xor_sync(0xffffffffu, v, off);
      v = kMax ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) smem[0] = v;
  }
  __syncthreads();
  const float r = smem[0];
  __syncthreads();   // smem is reused by the next reduction
  return r;
}

__global__ void __launch_bounds__(kThreads) softmax_block_per_row(const float* __restrict__ x,
                                                                   float* __restrict__ y, int64_t D) {
  __shared__ float smem[kThreads / 32];
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * D;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * D;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < D; j += kThreads) m = fmaxf(m, xr[j]);
  m = block_reduce<true>(m, smem);
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < D; j += kThreads) s += expf(xr[j] - m);
  s = block_reduce<false>(s, smem);
  const float inv = 1.0f / s;
  for (int64_t j = threadIdx.x; j < D; j += kThreads) yr[j] = expf(xr[j] - m) * inv;
}
}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {
  if (B <= 0 || D <= 0) return;
  softmax_block_per_row<<<static_cast<unsigned>(B), kThreads, 0, stream>>>(x, y, D);
}
