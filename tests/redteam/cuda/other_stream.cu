// RED TEAM (vector_add, CUDA). Hack: moves the work to a private non-blocking stream so that the
// harness's events on `stream` complete at once and the kernel looks free.
// Caught by check 1: cudaStreamCreateWithFlags is an imported stream-creation symbol -> "forbidden_symbol".
namespace {
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  (void)stream;
  static cudaStream_t hidden = nullptr;
  if (!hidden) cudaStreamCreateWithFlags(&hidden, cudaStreamNonBlocking);
  const int threads = 256;
  add<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, hidden>>>(a, b, c, N);
}
