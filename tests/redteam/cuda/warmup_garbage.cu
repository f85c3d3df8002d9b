// RED TEAM (vector_add, CUDA). Hack: saves the warm-up calls. The guard's timing phase starts each perf workload with
// `warmup` (3) calls before its timed batches, and the old design checked those only for "written" (a warm-up was
// thought of as free): so the kernel keeps a call counter per N and, for a perf-sized N (>= 1M, never a correctness
// size here), zeroes the output on the stream on the first 3 calls (every element written, nothing computed; a
// kernel doing real work could spend the warm-ups on, say, building tables over its inputs), then launches the
// honest kernel on every timed call. A counter per N, not one global counter: the correctness workloads
// (N <= 65537) come first and must stay honest, or check 5 would catch it there instead.
// Caught by check 9: warm-up calls are now validated against goldens exactly like timed calls (each on fresh inputs
// of its own, behind the gate) -> "timed_output_wrong", with "warm-up" in the message.
namespace {
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void zero(float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = 0.0f;
}

int calls_for(int64_t n) {  // calls so far with this N, this one included
  static int64_t seen_n[32];
  static int seen_calls[32];
  static int used = 0;
  for (int s = 0; s < used; ++s)
    if (seen_n[s] == n) return ++seen_calls[s];
  if (used == 32) return 1;
  seen_n[used] = n;
  seen_calls[used] = 1;
  ++used;
  return 1;
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  const int threads = 256;
  const unsigned blocks = static_cast<unsigned>((N + threads - 1) / threads);
  const bool perf_sized = N >= (int64_t{1} << 20);
  if (perf_sized && calls_for(N) <= 3) {  // the warm-ups: written, but garbage
    zero<<<blocks, threads, 0, stream>>>(c, N);
    return;
  }
  add<<<blocks, threads, 0, stream>>>(a, b, c, N);
}
