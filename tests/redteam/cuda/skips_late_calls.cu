// RED TEAM (vector_add, CUDA). Hack: launches nothing after the 13th call of a perf-sized N (the old design
// validated only timed samples drawn from the first min_samples calls; this kernel became a leader).
// Caught by check 9: every timed call gets fresh inputs and every timed call's outputs are compared with goldens
// -> "timed_output_wrong".
namespace {
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  static int64_t last_n = 0;
  static int calls = 0;
  calls = N == last_n ? calls + 1 : 1;
  last_n = N;
  if (N >= (int64_t{1} << 20) && calls > 13) return;
  add<<<static_cast<unsigned>((N + 255) / 256), 256, 0, stream>>>(a, b, c, N);
}
