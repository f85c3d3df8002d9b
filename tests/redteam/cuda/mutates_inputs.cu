// RED TEAM (vector_add, CUDA). Fault/hack: computes c correctly, then halves b in place (casting away
// const), leaving the harness's input buffer changed.
// Caught by check 3: inputs are hashed after each call -> "input_mutated".
namespace {
__global__ void add_and_clobber(const float* a, float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
    b[i] *= 0.5f;
  }
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  const int threads = 256;
  add_and_clobber<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, stream>>>(
      a, const_cast<float*>(b), c, N);
}
