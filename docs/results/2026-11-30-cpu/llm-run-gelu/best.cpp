// gelu, CPU reference: y = 0.5·x·(1 + erf(x/√2)) evaluated in double, rounded once to fp32.
#include <bit>
#include <cmath>
#include <cstdint>
#include <immintrin.h>

// 16 lanes of the loop body below: 1 + erf(z) = q (z < 0) or 2 - q, q = t P(t) exp(-z^2) (A&S 7.1.26).
static inline __m512 gelu16(__m512 v) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 z = _mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752440f));
  const __m512 az = _mm512_abs_ps(z);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), az, one));
  __m512 P = _mm512_set1_ps(1.061405429f);
  P = _mm512_fmadd_ps(P, t, _mm512_set1_ps(-1.453152027f));
  P = _mm512_fmadd_ps(P, t, _mm512_set1_ps(1.421413741f));
  P = _mm512_fmadd_ps(P, t, _mm512_set1_ps(-0.284496736f));
  P = _mm512_fmadd_ps(P, t, _mm512_set1_ps(0.254829592f));
  // exp(a), a = -z^2 clamped to -87: k = round(a log2e), r = a - k ln2 (two-part ln2), Taylor to r^6, 2^k by scalef.
  const __m512 a = _mm512_max_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), az), az), _mm512_set1_ps(-87.0f));
  const __m512 kf = _mm512_roundscale_ps(_mm512_mul_ps(a, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(0.693145751953125f), a);
  r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 e = _mm512_set1_ps(1.0f / 720.0f);
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.0f / 120.0f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.0f / 24.0f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(1.0f / 6.0f));
  e = _mm512_fmadd_ps(e, r, _mm512_set1_ps(0.5f));
  e = _mm512_fmadd_ps(e, r, one);
  e = _mm512_fmadd_ps(e, r, one);
  e = _mm512_scalef_ps(e, kf);
  const __m512 q = _mm512_mul_ps(_mm512_mul_ps(t, P), e);
  const __mmask16 neg = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 ope = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(2.0f), q), q);
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), ope);
}

// exp(a) for a in [-87, 0]: a = k ln2 + r, |r| <= ln2/2, degree-6 Taylor for exp(r) (rel. err ~1e-7), 2^k
// built in the exponent bits. Straight-line code so the compiler can vectorize the caller.
static inline float exp_neg(float a) {
  a = a < -87.0f ? -87.0f : a;
  const float shifter = 12582912.0f;                      // 1.5 * 2^23: adding it rounds to an integer
  float kf = a * 1.44269504088896341f + shifter;
  kf -= shifter;
  const float r = (a - kf * 0.693145751953125f) - kf * 1.428606765330187045e-06f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t k = static_cast<int32_t>(kf);
  return p * std::bit_cast<float>((k + 127) << 23);
}

extern "C" void khive_launch(const float* __restrict__ x, float* __restrict__ y, int64_t B, int64_t D) {
  const int64_t n = B * D;
  int64_t i0 = 0;
  // Head: masked stores until y + i0 is 64-byte aligned (floats are 4-byte aligned, so at most 15 elements).
  const int64_t head = std::min<int64_t>(n, ((64 - static_cast<int64_t>(reinterpret_cast<uintptr_t>(y) & 63)) & 63) / 4);
  if (head > 0) {
    const __mmask16 m = static_cast<__mmask16>((1u << head) - 1u);
    _mm512_mask_storeu_ps(y, m, gelu16(_mm512_maskz_loadu_ps(m, x)));
    i0 = head;
  }
  for (; i0 + 32 <= n; i0 += 32) {
    const __m512 v0 = _mm512_loadu_ps(x + i0);
    const __m512 v1 = _mm512_loadu_ps(x + i0 + 16);
    _mm512_stream_ps(y + i0, gelu16(v0));
    _mm512_stream_ps(y + i0 + 16, gelu16(v1));
  }
  _mm_sfence();   // streaming stores are weakly ordered: make them visible before returning
  for (; i0 + 16 <= n; i0 += 16) _mm512_storeu_ps(y + i0, gelu16(_mm512_loadu_ps(x + i0)));
  if (i0 < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i0)) - 1u);
    _mm512_mask_storeu_ps(y + i0, m, gelu16(_mm512_maskz_loadu_ps(m, x + i0)));
  }
}
