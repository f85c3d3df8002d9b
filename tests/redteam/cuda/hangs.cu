// RED TEAM (vector_add, CUDA). Fault: the kernel never finishes: every thread spins on a device flag
// that nothing sets (volatile, so each read really happens and the loop cannot be removed).
// Caught by check 2: the runner blocks in its synchronization, the watchdog kills it -> "timeout".
namespace {
__device__ volatile int never_set = 0;

__global__ void spin_forever(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  while (never_set == 0) {
  }
  if (i < n) c[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  const int threads = 256;
  spin_forever<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, stream>>>(a, b, c, N);
}
