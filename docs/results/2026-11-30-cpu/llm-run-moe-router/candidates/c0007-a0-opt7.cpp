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
  // vdpbf16ps: lane j += a[2j]*b[2j] + a[2j+1]*b[2j+1] in fp32; two accumulators hide its latency.
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    // w rows are contiguous, so running past this row prefetches the next one (prefetches never fault).
    _mm_prefetch(reinterpret_cast<const char*>(pb + i + 2048), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(pb + i + 2048 + 32), _MM_HINT_T0);
    acc0 = _mm512_dpbf16_ps(acc0, (__m512bh)_mm512_loadu_si512(pa + i), (__m512bh)_mm512_loadu_si512(pb + i));
    acc1 = _mm512_dpbf16_ps(acc1, (__m512bh)_mm512_loadu_si512(pa + i + 32), (__m512bh)_mm512_loadu_si512(pb + i + 32));
  }
  for (; i < n; i += 32) {  // tail: masked loads read only the remaining elements (zeros elsewhere add 0)
    const int64_t rem = n - i < 32 ? n - i : 32;
    const __mmask32 k = rem == 32 ? 0xFFFFFFFFu : ((1u << rem) - 1u);
    acc0 = _mm512_dpbf16_ps(acc0, (__m512bh)_mm512_maskz_loadu_epi16(k, pa + i), (__m512bh)_mm512_maskz_loadu_epi16(k, pb + i));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

extern "C" void khive_launch(const khive_bf16* x, const khive_bf16* w, float* topk_weights, int32_t* topk_ids, int64_t T,
                             int64_t H, int64_t E) {
  constexpr int64_t kTopk = 8;
  // A thread team costs a fork/join and a barrier (milliseconds when the cores are shared); only large
  // problems (>= 64 M multiply-adds, several ms on one core) are worth splitting.
  const bool parallel = T > 1 && static_cast<double>(T) * static_cast<double>(E) * static_cast<double>(H) >= 67108864.0;
#pragma omp parallel if (parallel)
  {
    std::vector<double> logit;
    std::vector<char> taken;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) {
      logit.assign(static_cast<size_t>(E), 0.0);
      taken.assign(static_cast<size_t>(E), 0);
      double m = -INFINITY;
      for (int64_t e = 0; e < E; ++e) {
        const double acc = dot_bf16(x + t * H, w + e * H, H);
        logit[e] = acc;
        m = std::fmax(m, acc);
      }
      double sum = 0.0;
      for (int64_t e = 0; e < E; ++e) sum += std::exp(logit[e] - m);
      for (int64_t j = 0; j < kTopk; ++j) {
        int64_t best = -1;
        for (int64_t e = 0; e < E; ++e)
          if (!taken[e] && (best < 0 || logit[e] > logit[best])) best = e;   // strict >: the lower index wins ties
        taken[best] = 1;
        topk_ids[t * kTopk + j] = static_cast<int32_t>(best);
        topk_weights[t * kTopk + j] = static_cast<float>(std::exp(logit[best] - m) / sum);
      }
    }
  }
}
