// RED TEAM (vector_add, CUDA). Hack: ignores `stream` and launches on the legacy default stream
// (cudaStreamLegacy), which needs no stream creation and so passes the symbol scan. The harness's
// stream is created non-blocking, so it does not synchronize with the legacy stream: the end event
// recorded on `stream` completes while this kernel is still running, and the sample measures ~0.
// The kernel repeats its stores 200 times (volatile, so none is dropped) to make it slow enough,
// ~1 ms at N = 4M, that the gap is plain. The result is right once the kernel finishes.
// Caught by check 8: the timed call's end event completed while work it launched was still running
// on another stream -> "work_outside_stream". (If a correctness call were compared after syncing only
// `stream`, the output would still be the sentinel: check 4, "unwritten_output"; the guard is expected
// to sync the device after a correctness call, so the stream misuse is what it reports.)
namespace {
__global__ void slow_add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  volatile float* out = c;
  for (int rep = 0; rep < 200; ++rep) out[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  (void)stream;
  const int threads = 256;
  slow_add<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, cudaStreamLegacy>>>(a, b, c, N);
}
