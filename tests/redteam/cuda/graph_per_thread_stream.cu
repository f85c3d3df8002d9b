// RED TEAM (vector_add, CUDA). Hack: records the work into a CUDA graph (stream capture on the per-thread default
// stream) and launches the graph there, returning at once: events on the stream khive_launch was given see nothing
// (a GEMM done this way was timed at 1/12 of its cost by the old design). The work is slowed to ~0.5 ms so the
// escape is plain.
// Caught by check 8: the executor synchronises the whole device before it answers and the judge's clock covers the
// exchange, so the graph's work is in the judge's time but not in the in-process events -> "timing_disagrees".
namespace {
__global__ void slow_add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  volatile float* out = c;
  for (int r = 0; r < 200; ++r) out[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  (void)stream;
  cudaStream_t s = cudaStreamPerThread;
  cudaGraph_t g = nullptr;
  cudaGraphExec_t e = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  slow_add<<<static_cast<unsigned>((N + 255) / 256), 256, 0, s>>>(a, b, c, N);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&e, g, 0);
  cudaGraphLaunch(e, s);
}
