// rope, CUDA reference: one thread per rotation pair (token, head, i < D/2) over q then k, rotate-half form,
// products and sums in double, each output rounded once to bf16.
namespace {
__global__ void ref_rope(const __nv_bfloat16* x, const float* cos, const float* sin, __nv_bfloat16* out, int64_t T,
                         int64_t H, int64_t D) {
  const int64_t h = D / 2, n = T * H * h;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e % h, th = e / h, t = th / H;
    const int64_t base = th * D;
    const double x1 = __bfloat162float(x[base + i]), x2 = __bfloat162float(x[base + i + h]);
    const double c = cos[t * h + i], s = sin[t * h + i];
    out[base + i] = __float2bfloat16(static_cast<float>(x1 * c - x2 * s));
    out[base + i + h] = __float2bfloat16(static_cast<float>(x2 * c + x1 * s));
  }
}

void launch(const __nv_bfloat16* x, const float* cos, const float* sin, __nv_bfloat16* out, int64_t T, int64_t H, int64_t D,
            cudaStream_t stream) {
  const int64_t n = T * H * (D / 2);
  if (n <= 0) return;
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  ref_rope<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), threads, 0, stream>>>(x, cos, sin, out, T, H, D);
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const float* cos, const float* sin,
                             __nv_bfloat16* q_out, __nv_bfloat16* k_out, int64_t T, int64_t Hq, int64_t Hkv, int64_t D,
                             cudaStream_t stream) {
  launch(q, cos, sin, q_out, T, Hq, D, stream);
  launch(k, cos, sin, k_out, T, Hkv, D, stream);
}
