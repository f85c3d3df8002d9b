// softmax candidate (CUDA): one warp per row, 8 warps per block. Each lane sweeps its strided slice of
// the row keeping an online (max, sum-of-exp) pair, the 32 pairs are merged with butterfly shuffles
// (rescaling the sums to the common max), then the lanes write exp(x - max) / sum. Any D works: lanes
// past the end of a short row keep (-inf, 0), which the merge ignores.
namespace {
__device__ __forceinline__ void merge_max_sum(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  const float a = (m == -INFINITY) ? 0.0f : s * expf(m - nm);
  const float b = (om == -INFINITY) ? 0.0f : os * expf(om - nm);
  m = nm;
  s = a + b;
}

__global__ void softmax_warp_per_row(const float* __restrict__ x, float* __restrict__ y, int64_t B, int64_t D) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= B) return;   // whole warps leave together: no shuffle is left half-populated
  const float* xr = x + row * D;
  float* yr = y + row * D;
  float m = -INFINITY, s = 0.0f;
  for (int64_t j = lane; j < D; j += 32) {
    const float v = xr[j];
    if (v > m) { s = s * expf(m - v) + 1.0f; m = v; }
    else s += expf(v - m);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, off);
    const float os = __shfl_xor_sync(0xffffffffu, s, off);
    merge_max_sum(m, s, om, os);
  }
  const float inv = 1.0f / s;
  for (int64_t j = lane; j < D; j += 32) yr[j] = expf(xr[j] - m) * inv;
}
}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {
  if (B <= 0 || D <= 0) return;
  const int warps = 8;
  softmax_warp_per_row<<<static_cast<unsigned>((B + warps - 1) / warps), warps * 32, 0, stream>>>(x, y, B, D);
}
