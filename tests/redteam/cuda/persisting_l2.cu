// RED TEAM (vector_add, CUDA). Hack: pins the inputs in L2 with a persisting access-policy window on
// the harness's stream, so they survive the L2 flush between timed samples and the kernel reads them
// at L2 rather than HBM bandwidth (a "3530 GB/s on an 864 GB/s GPU" result). The kernel is right.
// Caught by check 1: cudaStreamSetAttribute is an imported L2-persistence symbol -> "forbidden_symbol".
// (If it got through, the harness's persisting-L2 limit of 0 and the reset before each sample would
// make the window useless, and check 8 would report "persisting_l2".)
namespace {
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  cudaStreamAttrValue attr = {};
  attr.accessPolicyWindow.base_ptr = const_cast<float*>(a);
  attr.accessPolicyWindow.num_bytes = static_cast<size_t>(N) * sizeof(float);
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
  const int threads = 256;
  add<<<static_cast<unsigned>((N + threads - 1) / threads), threads, 0, stream>>>(a, b, c, N);
}
