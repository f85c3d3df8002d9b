// softmax candidate: online (one-pass) normalizer. A single sweep keeps a running max m and a running
// sum s of exp(x - m), rescaling s by exp(m_old - m_new) whenever the max grows; eight independent
// (m, s) lanes are merged at the end of the row. A second sweep writes exp(x - m) / s. Rows in parallel.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  constexpr int L = 8;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < B; ++r) {
    const float* __restrict__ xr = x + r * D;
    float* __restrict__ yr = y + r * D;
    float m[L], s[L];
    for (int l = 0; l < L; ++l) { m[l] = -INFINITY; s[l] = 0.0f; }
    int64_t j = 0;
    for (; j + L <= D; j += L)
      for (int l = 0; l < L; ++l) {
        const float v = xr[j + l];
        if (v > m[l]) { s[l] = s[l] * std::exp(m[l] - v) + 1.0f; m[l] = v; }
        else s[l] += std::exp(v - m[l]);
      }
    for (int l = 0; j < D; ++j, ++l) {   // tail: at most L-1 elements, one per lane
      const float v = xr[j];
      if (v > m[l]) { s[l] = s[l] * std::exp(m[l] - v) + 1.0f; m[l] = v; }
      else s[l] += std::exp(v - m[l]);
    }
    float mx = m[0];
    for (int l = 1; l < L; ++l) mx = m[l] > mx ? m[l] : mx;
    float sum = 0.0f;
    for (int l = 0; l < L; ++l) if (s[l] > 0.0f) sum += s[l] * std::exp(m[l] - mx);
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t k = 0; k < D; ++k) yr[k] = std::exp(xr[k] - mx) * inv;
  }
}
