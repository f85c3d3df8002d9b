// RED TEAM (vector_add, CUDA). Hack: puts a 2 us spin on the stream it was given (so that stream's events show a
// plausible, tiny time) and the real work, slowed to ~0.5 ms, on the legacy default stream, which the given
// non-blocking stream does not wait for.
// Caught by check 8: the judge's clock covers the device synchronisation that the executor makes before answering
// (and a drain of the device after), the in-process events do not -> "timing_disagrees".
namespace {
__global__ void spin(long long ns) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}
__global__ void slow_add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  volatile float* out = c;
  for (int r = 0; r < 200; ++r) out[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  spin<<<1, 1, 0, stream>>>(2000);
  slow_add<<<static_cast<unsigned>((N + 255) / 256), 256, 0, cudaStreamLegacy>>>(a, b, c, N);
}
