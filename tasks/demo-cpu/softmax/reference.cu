// softmax, CUDA reference: one thread per row (the reduction is the row), max / sum / divide in double,
// each output rounded once to fp32. Slow and obviously correct; bounds handled for any B and D.
namespace {
__global__ void ref_softmax(const float* x, float* y, int64_t B, int64_t D) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= B) return;
  const float* xr = x + r * D;
  float* yr = y + r * D;
  double mx = xr[0];
  for (int64_t j = 1; j < D; ++j) mx = fmax(mx, static_cast<double>(xr[j]));
  double sum = 0.0;
  for (int64_t j = 0; j < D; ++j) sum += exp(static_cast<double>(xr[j]) - mx);
  for (int64_t j = 0; j < D; ++j) yr[j] = static_cast<float>(exp(static_cast<double>(xr[j]) - mx) / sum);
}
}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {
  if (B <= 0 || D <= 0) return;
  const int threads = 64;
  ref_softmax<<<static_cast<unsigned>((B + threads - 1) / threads), threads, 0, stream>>>(x, y, B, D);
}
