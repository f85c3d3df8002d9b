// kb23_softmax, CUDA reference: softmax(x)[j] = exp(x[j] - max) / sum_k exp(x[k] - max) of every row of x[B, D].
// One 256-thread block per row: the row maximum, then the sum of exp(x - max) in double with a shared-memory
// tree, then each output from double and rounded once to fp32. Three passes over the row; simple on purpose.
namespace {
__device__ __forceinline__ double block_reduce(double v, bool is_max, double* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) sh[threadIdx.x] = is_max ? fmax(sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x] + sh[threadIdx.x + s];
    __syncthreads();
  }
  const double r = sh[0];
  __syncthreads();   // sh is reused by the next reduction
  return r;
}

__global__ void __launch_bounds__(256) ref_rows(const float* x, float* y, int64_t D) {
  __shared__ double sh[256];
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * D;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * D;
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) m = fmax(m, static_cast<double>(xr[j]));
  m = block_reduce(m, true, sh);
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) s += exp(static_cast<double>(xr[j]) - m);
  s = block_reduce(s, false, sh);
  const double inv = 1.0 / s;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) yr[j] = static_cast<float>(exp(static_cast<double>(xr[j]) - m) * inv);
}
}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {
  if (B <= 0 || D <= 0) return;
  ref_rows<<<static_cast<unsigned>(B), 256, 0, stream>>>(x, y, D);   // B <= 2^31 - 1 (a constraint)
}
