// moe_router, CPU reference: per token, the E logits summed in double (exact here, see the definition),
// softmax in double, then topk rounds of "largest remaining logit, lowest index on ties" (selection by logit
// equals selection by probability: exp is increasing). Tokens in parallel.
#include <cmath>
#include <cstdint>
#include <immintrin.h>
#include <vector>

// 16 bf16 -> 16 fp32: bf16 is the high half of an fp32, so widen to 32 bits and shift left by 16.
static inline __m512 bf16x16_to_ps(__m256i v) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16)); }

// fp32 dot product of two bf16 rows of length n (exact here: every partial sum is a multiple of 2^-12 below 2^11).
static inline float dot_bf16(const khive_bf16* __restrict__ a, const khive_bf16* __restrict__ b, int64_t n) {
  const uint16_t* pa = reinterpret_cast<const uint16_t*>(a);
  const uint16_t* pb = reinterpret_cast<const uint16_t*>(b);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    // w rows are contiguous, so running past this row prefetches the next one (prefetches never fault).
    _mm_prefetch(reinterpret_cast<const char*>(pb + i + 2048), _MM_HINT_T0);
    acc0 = _mm512_fmadd_ps(bf16x16_to_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pa + i))),
                           bf16x16_to_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + i))), acc0);
    acc1 = _mm512_fmadd_ps(bf16x16_to_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pa + i + 16))),
                           bf16x16_to_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + i + 16))), acc1);
  }
  for (; i < n; i += 16) {  // tail: masked loads read only the remaining elements (zeros elsewhere)
    const int64_t rem = n - i < 16 ? n - i : 16;
    const __mmask16 k = static_cast<__mmask16>((1u << rem) - 1u);
    acc0 = _mm512_fmadd_ps(bf16x16_to_ps(_mm256_maskz_loadu_epi16(k, pa + i)), bf16x16_to_ps(_mm256_maskz_loadu_epi16(k, pb + i)), acc0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

// NT tokens x 4 experts of logits: out[a * ldo + b] = dot(x row a, w row b); NT*4 zmm accumulators + 4 w operands.
template <int NT>
static inline void tile_x4(const khive_bf16* __restrict__ x, const khive_bf16* __restrict__ w, int64_t H, float* out, int64_t ldo) {
  const uint16_t* px = reinterpret_cast<const uint16_t*>(x);
  const uint16_t* pw = reinterpret_cast<const uint16_t*>(w);
  __m512 acc[NT][4];
  for (int a = 0; a < NT; ++a)
    for (int b = 0; b < 4; ++b) acc[a][b] = _mm512_setzero_ps();
  for (int64_t i = 0; i < H; i += 16) {
    const int64_t rem = H - i < 16 ? H - i : 16;
    const __mmask16 k = static_cast<__mmask16>((1u << rem) - 1u);  // all ones except in the tail
    // 4 w rows = 4 sequential streams; each is prefetched 4 KB ahead, as the single stream of the leader,
    // once per 64-byte line (every second 16-element step); prefetches never fault past the end.
    if ((i & 31) == 0)
      for (int b = 0; b < 4; ++b) _mm_prefetch(reinterpret_cast<const char*>(pw + b * H + i + 2048), _MM_HINT_T0);
    __m512 wv[4];
    for (int b = 0; b < 4; ++b) wv[b] = bf16x16_to_ps(_mm256_maskz_loadu_epi16(k, pw + b * H + i));
    for (int a = 0; a < NT; ++a) {
      const __m512 xv = bf16x16_to_ps(_mm256_maskz_loadu_epi16(k, px + a * H + i));
      for (int b = 0; b < 4; ++b) acc[a][b] = _mm512_fmadd_ps(xv, wv[b], acc[a][b]);
    }
  }
  for (int a = 0; a < NT; ++a)
    for (int b = 0; b < 4; ++b) out[a * ldo + b] = _mm512_reduce_add_ps(acc[a][b]);
}

extern "C" void khive_launch(const khive_bf16* x, const khive_bf16* w, float* topk_weights, int32_t* topk_ids, int64_t T,
                             int64_t H, int64_t E) {
  constexpr int64_t kTopk = 8;
  // A thread team costs a fork/join and a barrier (milliseconds when the cores are shared); only large
  // problems (>= 64 M multiply-adds, several ms on one core) are worth splitting.
  const bool parallel = T > 1 && static_cast<double>(T) * static_cast<double>(E) * static_cast<double>(H) >= 67108864.0;
#pragma omp parallel if (parallel)
  {
    std::vector<float> block(static_cast<size_t>(4 * E));  // logits of up to 4 tokens, token a at a * E
    std::vector<float> p(static_cast<size_t>(E));
#pragma omp for schedule(static)
    for (int64_t t0 = 0; t0 < T; t0 += 4) {
      const int64_t nt = T - t0 < 4 ? T - t0 : 4;
      const khive_bf16* xb = x + t0 * H;
      int64_t e0 = 0;
      for (; e0 + 4 <= E; e0 += 4) {
        float* out = block.data() + e0;
        switch (nt) {
          case 4: tile_x4<4>(xb, w + e0 * H, H, out, E); break;
          case 3: tile_x4<3>(xb, w + e0 * H, H, out, E); break;
          case 2: tile_x4<2>(xb, w + e0 * H, H, out, E); break;
          default: tile_x4<1>(xb, w + e0 * H, H, out, E); break;
        }
      }
      for (; e0 < E; ++e0)
        for (int64_t a = 0; a < nt; ++a) block[a * E + e0] = dot_bf16(xb + a * H, w + e0 * H, H);
     for (int64_t t = t0; t < t0 + nt; ++t) {
      const float* logit = block.data() + (t - t0) * E;
      float m = -INFINITY;
      for (int64_t e = 0; e < E; ++e) m = std::fmax(m, logit[e]);
      // One pass: p[e] = exp(logit - max) for the sum, and the 8 largest logits kept sorted (descending).
      // A later expert enters only if strictly larger, and stops behind equal values: the lower index wins ties.
      float sum = 0.0f;
      float bv[kTopk];
      int32_t bi[kTopk];
      int64_t cnt = 0;
      for (int64_t e = 0; e < E; ++e) {
        const float v = logit[e];
        p[e] = std::exp(v - m);
        sum += p[e];
        if (cnt < kTopk || v > bv[kTopk - 1]) {
          int64_t j = cnt < kTopk ? cnt++ : kTopk - 1;
          while (j > 0 && bv[j - 1] < v) {
            bv[j] = bv[j - 1];
            bi[j] = bi[j - 1];
            --j;
          }
          bv[j] = v;
          bi[j] = static_cast<int32_t>(e);
        }
      }
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < kTopk; ++j) {
        topk_ids[t * kTopk + j] = bi[j];
        topk_weights[t * kTopk + j] = p[bi[j]] * inv;
      }
     }
    }
  }
}
