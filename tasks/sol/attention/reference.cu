// attention, CUDA reference: non-causal prefill attention (every query sees all S keys), GQA.
constexpr bool CAUSAL = false;
// One 128-thread block per tile of 16 query rows of one query head: the K and V rows of a 32-key tile are staged
// once in shared memory (fp32) and used by all 16 rows, which is what makes it ~10x faster than one block per row
// on long sequences (the goldens of every timed call come from here). Scores q·k in fp32 (each warp: 4 rows x its
// lane's key), an online softmax in fp32 (running max and sum per row), P·V in fp32 (each thread: one output
// dimension of 16 rows, or of 8 rows when D <= 64), each output rounded once to bf16.
namespace {
constexpr int kThreads = 128;
constexpr int kRows = 16;      // query rows per block
constexpr int kKeys = 32;      // keys per tile: one per lane
constexpr int kPad = 132;      // smem row stride in floats (>= 128 = max D): a 16-byte load per lane of 8 rows
                               // 528 bytes apart hits 8 different bank groups

// Grid: (tile of 16 query rows, query head h, batch b). GQA: query head h reads KV head h / (Hq / Hkv).
// Rows i >= S are computed on zero queries and never written; keys j >= S (or j > i when causal) score -inf.
__global__ void __launch_bounds__(kThreads) ref_attention(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                          const __nv_bfloat16* v, __nv_bfloat16* o, int64_t S,
                                                          int64_t Hq, int64_t Hkv, int D) {
  __shared__ __align__(16) float qs[kRows][kPad];
  __shared__ __align__(16) float ks[kKeys][kPad];
  __shared__ __align__(16) float vs[kKeys][kPad];
  __shared__ __align__(16) float ps[kRows][kKeys];
  __shared__ float resc[kRows], ls[kRows];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kRows, h = blockIdx.y, b = blockIdx.z;
  const int64_t g = h / (Hq / Hkv);
  const int64_t qstride = Hq * D, kvstride = Hkv * D;   // between consecutive sequence positions
  const __nv_bfloat16* qb = q + (b * S * Hq + h) * D;
  const __nv_bfloat16* kb = k + (b * S * Hkv + g) * D;
  const __nv_bfloat16* vb = v + (b * S * Hkv + g) * D;
  const int D4 = (D + 3) / 4 * 4;                        // dot products run over float4s; the pad is zero
  const float scale = 1.0f / sqrtf(static_cast<float>(D));

  for (int e = t; e < kRows * D4; e += kThreads) {
    const int r = e / D4, d = e % D4;
    qs[r][d] = (i0 + r < S && d < D) ? __bfloat162float(qb[(i0 + r) * qstride + d]) : 0.0f;
  }
  // Scores: warp w owns rows w, w + 4, w + 8, w + 12 (and their running max m and sum l, the same in every lane).
  float m[4], l[4];
  for (int x = 0; x < 4; ++x) m[x] = -INFINITY, l[x] = 0.0f;
  // P·V: thread t accumulates dimension d of rows r0, r0 + step, ...
  const int dims = D > 64 ? 128 : 64, step = kThreads / dims, d = t % dims, r0 = t / dims;
  float acc[kRows];
  for (int x = 0; x < kRows; ++x) acc[x] = 0.0f;

  const int64_t n_keys = CAUSAL ? (i0 + kRows < S ? i0 + kRows : S) : S;   // the last key any row of the tile sees
  for (int64_t j0 = 0; j0 < n_keys; j0 += kKeys) {
    __syncthreads();   // the previous tile's ks, vs and ps are no longer read (and qs is written, first time)
    for (int e = t; e < kKeys * D4; e += kThreads) {
      const int u = e / D4, c = e % D4;
      const bool in = j0 + u < S && c < D;
      ks[u][c] = in ? __bfloat162float(kb[(j0 + u) * kvstride + c]) : 0.0f;
      vs[u][c] = in ? __bfloat162float(vb[(j0 + u) * kvstride + c]) : 0.0f;
    }
    __syncthreads();
    const int64_t j = j0 + lane;
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int c = 0; c < D4; c += 4) {
      const float4 kv4 = *reinterpret_cast<const float4*>(&ks[lane][c]);
      for (int x = 0; x < 4; ++x) {
        const float4 q4 = *reinterpret_cast<const float4*>(&qs[warp + 4 * x][c]);
        s[x] = fmaf(q4.x, kv4.x, s[x]);
        s[x] = fmaf(q4.y, kv4.y, s[x]);
        s[x] = fmaf(q4.z, kv4.z, s[x]);
        s[x] = fmaf(q4.w, kv4.w, s[x]);
      }
    }
    for (int x = 0; x < 4; ++x) {
      const int r = warp + 4 * x;
      const int64_t i = i0 + r < S ? i0 + r : S - 1;   // rows past the end mask like the last row
      const bool valid = j < S && (!CAUSAL || j <= i);
      const float sc = valid ? s[x] * scale : -INFINITY;
      float mx = sc;
      for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[x], mx);   // finite: key 0 is in the first tile and every row sees it
      const float p = valid ? expf(sc - m_new) : 0.0f;
      float sum = p;
      for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      const float rescale = expf(m[x] - m_new);   // 0 on the first tile (m = -inf)
      l[x] = l[x] * rescale + sum;
      m[x] = m_new;
      ps[r][lane] = p;
      if (lane == 0) resc[r] = rescale;
    }
    __syncthreads();
    if (d < D)
      for (int x = 0; x < kRows / step; ++x) {
        const int r = r0 + step * x;
        float a = acc[x] * resc[r];
        for (int u = 0; u < kKeys; u += 4) {
          const float4 p4 = *reinterpret_cast<const float4*>(&ps[r][u]);
          a = fmaf(p4.x, vs[u][d], a);
          a = fmaf(p4.y, vs[u + 1][d], a);
          a = fmaf(p4.z, vs[u + 2][d], a);
          a = fmaf(p4.w, vs[u + 3][d], a);
        }
        acc[x] = a;
      }
  }
  if (lane == 0)
    for (int x = 0; x < 4; ++x) ls[warp + 4 * x] = l[x];
  __syncthreads();
  if (d < D)
    for (int x = 0; x < kRows / step; ++x) {
      const int r = r0 + step * x;
      if (i0 + r < S) o[(b * S + i0 + r) * qstride + h * D + d] = __float2bfloat16(acc[x] / ls[r]);
    }
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                             int64_t B, int64_t S, int64_t Hq, int64_t Hkv, int64_t D, cudaStream_t stream) {
  if (B <= 0 || S <= 0 || Hq <= 0 || Hkv <= 0 || D <= 0 || D > 128) return;
  const dim3 grid(static_cast<unsigned>((S + kRows - 1) / kRows), static_cast<unsigned>(Hq), static_cast<unsigned>(B));
  ref_attention<<<grid, kThreads, 0, stream>>>(q, k, v, o, S, Hq, Hkv, static_cast<int>(D));
}
