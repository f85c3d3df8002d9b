// RED TEAM (vector_add, CUDA). Fault: a race between blocks. Every block stages its sums through the
// same 256-float global scratch array (indexed by threadIdx.x, so one block alone is right): each thread
// stores a[i] there, waits ~2 us, then reads it back and adds b[i]. Blocks on other SMs overwrite the
// same slots in the meantime, so threads read another block's a[j]; which ones depends on scheduling.
// N <= 256 (one block) is right; N = 1000 (4 blocks) and 65537 (257 blocks) are not.
// Caught by check 5 -> "wrong_output", or by check 6 -> "nondeterministic" if a run happened to be right.
namespace {
__device__ float scratch[256];

__global__ void add_via_shared_scratch(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  volatile float* slot = scratch + threadIdx.x;
  if (i < n) *slot = a[i];
  __nanosleep(2000);
  if (i < n) c[i] = *slot + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  const int threads = 256;
  add_via_shared_scratch<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, stream>>>(a, b, c, N);
}
