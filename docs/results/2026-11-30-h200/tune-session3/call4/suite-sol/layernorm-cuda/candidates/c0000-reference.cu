// layernorm, CUDA reference: one 256-thread block per row, two passes in double (mean, then the biased
// variance of x - mean), y = (x - mean) * rstd * weight + bias in double, rounded once to bf16.
namespace {
constexpr int kThreads = 256;

// Forced inline: an out-of-line __device__ helper leaves a host stub importing exit() (rejected by the policy).
__device__ __forceinline__ double block_sum(double v, double* part) {
  part[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  const double total = part[0];
  __syncthreads();   // part is reused by the next call
  return total;
}

__global__ void ref_layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias,
                              __nv_bfloat16* y, int64_t H) {
  __shared__ double part[kThreads];
  const __nv_bfloat16* xr = x + static_cast<int64_t>(blockIdx.x) * H;
  __nv_bfloat16* yr = y + static_cast<int64_t>(blockIdx.x) * H;
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < H; i += kThreads) s += __bfloat162float(xr[i]);
  const double mean = block_sum(s, part) / static_cast<double>(H);
  double q = 0.0;
  for (int64_t i = threadIdx.x; i < H; i += kThreads) {
    const double d = static_cast<double>(__bfloat162float(xr[i])) - mean;
    q += d * d;
  }
  const double rstd = 1.0 / sqrt(block_sum(q, part) / static_cast<double>(H) + 1e-5);
  for (int64_t i = threadIdx.x; i < H; i += kThreads) {
    const double v = (static_cast<double>(__bfloat162float(xr[i])) - mean) * rstd * __bfloat162float(weight[i]) +
                     __bfloat162float(bias[i]);
    yr[i] = __float2bfloat16(static_cast<float>(v));
  }
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias,
                             __nv_bfloat16* y, int64_t T, int64_t H, cudaStream_t stream) {
  if (T <= 0 || H <= 0) return;
  ref_layernorm<<<static_cast<unsigned>(T), kThreads, 0, stream>>>(x, weight, bias, y, H);
}
