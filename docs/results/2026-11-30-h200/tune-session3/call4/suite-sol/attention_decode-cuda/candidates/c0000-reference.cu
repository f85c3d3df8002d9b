// attention_decode, CUDA reference: one query token per sequence against L cached keys, GQA. One 128-thread
// block per (query head, sequence): each warp scores 32 keys of a 128-key tile, the block keeps an online
// softmax in fp32 and thread d accumulates output dimension d.
namespace {
constexpr int kThreads = 128;   // keys per tile, and >= D (one thread per output dimension)

// One block computes one output row: softmax(q·K^T / sqrt(D))·V over keys [0, n_keys) of one KV head, with an
// online (running max, running sum) softmax in fp32 over tiles of 128 keys. Key j's row starts at k + j·stride.
// Forced inline: an out-of-line __device__ helper leaves a host-side stub that imports exit(), which the symbol
// policy rejects (process control).
__device__ __forceinline__ void attend_row(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                           int64_t stride, int64_t n_keys, int D, __nv_bfloat16* o) {
  __shared__ float qs[128];
  __shared__ float p[kThreads];
  __shared__ float red[kThreads];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  if (t < D) qs[t] = __bfloat162float(q[t]);
  __syncthreads();
  float m = -INFINITY, l = 0.0f, acc = 0.0f;   // acc: output dimension t (when t < D)
  for (int64_t j0 = 0; j0 < n_keys; j0 += kThreads) {
    // Scores of the tile: each warp takes 32 keys; for one key its lanes read the key's row together
    // (coalesced) and combine the partial dot products with shuffles. j is the same for the whole warp.
    for (int u = warp; u < kThreads; u += kThreads / 32) {
      const int64_t j = j0 + u;
      float dot = 0.0f;
      if (j < n_keys)
        for (int d = lane; d < D; d += 32) dot = fmaf(qs[d], __bfloat162float(k[j * stride + d]), dot);
      for (int off = 16; off > 0; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
      if (lane == 0) p[u] = j < n_keys ? dot * scale : -INFINITY;
    }
    __syncthreads();
    const int64_t j = j0 + t;
    const float s = p[t];
    red[t] = s;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (t < w) red[t] = fmaxf(red[t], red[t + w]);
      __syncthreads();
    }
    const float m_new = fmaxf(m, red[0]);   // finite: every tile holds at least one key
    __syncthreads();
    const float e = (j < n_keys) ? expf(s - m_new) : 0.0f;
    p[t] = e;
    red[t] = e;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (t < w) red[t] += red[t + w];
      __syncthreads();
    }
    const float rescale = expf(m - m_new);   // 0 on the first tile (m = -inf)
    l = l * rescale + red[0];
    m = m_new;
    if (t < D) {
      acc *= rescale;
      const int64_t n = n_keys - j0 < kThreads ? n_keys - j0 : kThreads;
      for (int64_t u = 0; u < n; ++u) acc = fmaf(p[u], __bfloat162float(v[(j0 + u) * stride + t]), acc);
    }
    __syncthreads();   // p and red are overwritten by the next tile
  }
  if (t < D) o[t] = __float2bfloat16(acc / l);
}
__global__ void __launch_bounds__(kThreads) ref_decode(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                       const __nv_bfloat16* v, __nv_bfloat16* o, int64_t L, int64_t Hq,
                                                       int64_t Hkv, int D) {
  const int64_t h = blockIdx.x, b = blockIdx.y;
  const int64_t g = h / (Hq / Hkv);
  const int64_t row = (b * Hq + h) * D;
  const int64_t kv = (b * L * Hkv + g) * D;
  attend_row(q + row, k + kv, v + kv, Hkv * D, L, D, o + row);
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                             int64_t B, int64_t L, int64_t Hq, int64_t Hkv, int64_t D, cudaStream_t stream) {
  if (B <= 0 || L <= 0 || Hq <= 0) return;
  ref_decode<<<dim3(static_cast<unsigned>(Hq), static_cast<unsigned>(B)), kThreads, 0, stream>>>(q, k, v, o, L, Hq, Hkv,
                                                                                               static_cast<int>(D));
}
