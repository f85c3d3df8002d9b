// gelu, CUDA reference: one thread per element, evaluated in double, rounded once to fp32.
namespace {
__global__ void ref_gelu(const float* x, float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + erf(v * 0.70710678118654752440)));
  }
}
}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {
  const int64_t n = B * D;
  if (n <= 0) return;
  const int threads = 256;
  ref_gelu<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, stream>>>(x, y, n);
}
