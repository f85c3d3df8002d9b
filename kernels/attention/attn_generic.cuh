// Generic prefill attention path (spliced in with `// khive:include attn_generic.cuh`): one warp per (batch, query
// row, head), fp32, any D and any alignment. The output is produced in chunks of 256 dims (8 per lane), each chunk
// a full online-softmax pass over the visible keys (dot products warp-reduced). Needs the PROLOGUE's khive_t,
// khive_to_float_t, khive_from_float_t and KHIVE_CAUSAL (query i sees keys j <= i + Skv - Sq).
__global__ void __launch_bounds__(128) khive_attn_generic(const khive_t* __restrict__ q, const khive_t* __restrict__ k,
                                                         const khive_t* __restrict__ v, khive_t* __restrict__ o, int64_t B,
                                                         int64_t Sq, int64_t Skv, int64_t Hq, int64_t Hkv, int64_t D,
                                                         float scale_log2) {
  constexpr int kPer = 8;
  const int lane = threadIdx.x % 32;
  const int64_t rows = B * Sq * Hq, group = Hq / Hkv, off = Skv - Sq;
  for (int64_t w = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < rows; w += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = w % Hq, i = (w / Hq) % Sq, b = w / (Hq * Sq), hk = h / group;
    const khive_t* qr = q + w * D;  // q is [B, Sq, Hq, D]: row w in (b, i, h) order
    const int64_t n_keys = KHIVE_CAUSAL ? (i + off + 1 < Skv ? i + off + 1 : Skv) : Skv;
    for (int64_t d0 = 0; d0 < D; d0 += 32 * kPer) {
      float m = -INFINITY, l = 0.0f, acc[kPer];
#pragma unroll
      for (int e = 0; e < kPer; ++e) acc[e] = 0.0f;
      for (int64_t j = 0; j < n_keys; ++j) {
        const khive_t* kr = k + ((b * Skv + j) * Hkv + hk) * D;
        const khive_t* vr = v + ((b * Skv + j) * Hkv + hk) * D;
        float dot = 0.0f;
        for (int64_t d = lane; d < D; d += 32) dot += khive_to_float_t(qr[d]) * khive_to_float_t(kr[d]);
#pragma unroll
        for (int sh = 16; sh > 0; sh >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, sh);
        const float x = dot * scale_log2, m_new = fmaxf(m, x);
        const float alpha = exp2f(m - m_new), p = exp2f(x - m_new);  // m = -inf at the first key: alpha = 0
        l = l * alpha + p;
#pragma unroll
        for (int e = 0; e < kPer; ++e) {
          const int64_t d = d0 + lane + 32 * e;
          acc[e] = acc[e] * alpha + (d < D ? p * khive_to_float_t(vr[d]) : 0.0f);
        }
        m = m_new;
      }
      const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const int64_t d = d0 + lane + 32 * e;
        if (d < D) o[w * D + d] = khive_from_float_t(acc[e] * inv);
      }
    }
  }
}

// The generic path's launch: a warp per output row; the grid-stride loop covers rows beyond 2^31 blocks' worth.
inline void khive_attn_generic_launch(const khive_t* q, const khive_t* k, const khive_t* v, khive_t* o, int64_t B, int64_t Sq,
                                      int64_t Skv, int64_t Hq, int64_t Hkv, int64_t D, float scale_log2, cudaStream_t stream) {
  const int64_t warps = B * Sq * Hq;
  int64_t blocks = (warps + 3) / 4;
  if (blocks > 0x7fffffff) blocks = 0x7fffffff;
  khive_attn_generic<<<unsigned(blocks), 128, 0, stream>>>(q, k, v, o, B, Sq, Skv, Hq, Hkv, D, scale_log2);
}
