// vector_add, CUDA reference: one thread per element, c[i] = a[i] + b[i], enqueued on `stream`.
namespace {
__global__ void ref_vector_add(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  if (N <= 0) return;
  const int threads = 256;
  const int64_t blocks = (N + threads - 1) / threads;
  ref_vector_add<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(a, b, c, N);
}
