// RED TEAM (vector_add, CUDA). Hack: right answers, but from the 11th call of a perf-sized N on it also halves
// input b in place (the old design hashed inputs only around a few early timed calls).
// Caught by check 3: on a GPU the judge cannot make the shared inputs read-only (an importer may always map CUDA
// virtual memory read-write), so it hashes every input after every call -> "input_mutated".
namespace {
__global__ void add_and_halve(const float* a, float* b, float* c, int64_t n, bool halve) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  c[i] = a[i] + b[i];
  if (halve) b[i] *= 0.5f;
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  static int64_t last_n = 0;
  static int calls = 0;
  calls = N == last_n ? calls + 1 : 1;
  last_n = N;
  const bool halve = N >= (int64_t{1} << 20) && calls > 10;
  add_and_halve<<<static_cast<unsigned>((N + 255) / 256), 256, 0, stream>>>(a, const_cast<float*>(b), c, N, halve);
}
