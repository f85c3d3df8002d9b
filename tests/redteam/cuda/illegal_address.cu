// RED TEAM (vector_add, CUDA). Fault: computes c correctly, but the last thread also stores far out of
// bounds (2^36 floats past c, no allocation there), an illegal address.
// Caught by check 2: the kernel fails with cudaErrorIllegalAddress, the context is lost; the runner
// process reports it (and dies), the orchestrator is unharmed -> "cuda_error".
namespace {
__global__ void add_then_stray(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == n - 1) c[i + (int64_t{1} << 36)] = 1.0f;   // 256 GiB past the end
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  const int threads = 256;
  add_then_stray<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, stream>>>(a, b, c, N);
}
