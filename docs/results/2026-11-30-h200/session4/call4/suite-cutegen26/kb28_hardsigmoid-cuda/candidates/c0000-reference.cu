// kb28_hardsigmoid, CUDA reference: y = relu6(x + 3) / 6 = min(max(x + 3, 0), 6) / 6 (torch's definition), elementwise over x[B, D].
// Computed in double and rounded once to fp32; grid-stride loop with 64-bit indices (B*D reaches 1.6e9).
namespace {
__device__ __forceinline__ double op(double x) { return fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0; }

__global__ void ref_act(const float* x, float* y, int64_t total) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[e] = static_cast<float>(op(static_cast<double>(x[e])));
}
}  // namespace

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D, cudaStream_t stream) {
  const int64_t total = B * D;
  if (total <= 0) return;
  const int64_t blocks = (total + 255) / 256;
  ref_act<<<static_cast<unsigned>(blocks < 1048576 ? blocks : 1048576), 256, 0, stream>>>(x, y, total);
}
