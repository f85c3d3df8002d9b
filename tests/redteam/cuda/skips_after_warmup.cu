// RED TEAM (vector_add, CUDA). Hack: detects the timing loop by counting calls, and stops launching
// once the harness is timing. The guard's phases (src/khive/job/protocol.hpp):
//   correctness (checks 3-7) runs only the correctness workloads, N <= 65537 here: about 6 calls per
//   workload and seed, a few seeds, all in one runner process;
//   timing (check 8) runs the perf workloads, N >= 1M: 3 warm-up calls, then >= 10 timed samples.
// So the kernel keeps a call counter per N, and skips the launch once a perf-sized N has been called
// more than 3 times: right for the warm-up, nothing in any timed sample. (A single global counter
// with a threshold of, say, 40 would not do: 4 correctness workloads x several seeds x ~6 calls
// pass 40 before the correctness phase ends, and check 4 would catch the skip there instead.)
// Caught by check 9: the outputs of timed calls are poisoned before each call, fed fresh inputs each
// sample, and compared with the reference; they still hold the sentinel -> "timed_output_wrong".
namespace {
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int calls_for(int64_t n) {   // calls so far with this N, this one included
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
  const bool perf_sized = N >= (int64_t{1} << 20);
  if (perf_sized && calls_for(N) > 3) return;   // timed samples: skip the work entirely
  const int threads = 256;
  add<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, stream>>>(a, b, c, N);
}
