// swiglu, CUDA reference: one thread per output element (grid-stride), y = silu(gate) * up in double with
// gate = x[t, i] and up = x[t, I + i], rounded once to bf16.
namespace {
__global__ void ref_swiglu(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t T, int64_t I) {
  const int64_t n = T * I;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = e / I, i = e % I;
    const double g = __bfloat162float(x[t * 2 * I + i]);
    const double u = __bfloat162float(x[t * 2 * I + I + i]);
    y[e] = __float2bfloat16(static_cast<float>(g / (1.0 + exp(-g)) * u));
  }
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t T, int64_t I, cudaStream_t stream) {
  if (T <= 0 || I <= 0) return;
  const int64_t n = T * I;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  ref_swiglu<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), threads, 0, stream>>>(x, y, T, I);
}
