// gelu candidate: an inline, vectorizable erf, so the whole loop runs in SIMD lanes (libm's erff does
// not vectorize). erf(z) for z >= 0 is Abramowitz & Stegun 7.1.26:
//   erf(z) = 1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) e^(-z^2),  t = 1 / (1 + p z),
// absolute error <= 1.5e-7, extended to z < 0 by symmetry. In y = 0.5·x·(1 + erf) that is <= 0.75e-7·|x|
// (plus a few fp32 roundings), about 1e-6 at |x| = 8: inside the task's 1e-5. Rows in parallel.
#include <cmath>

static inline float erf_as(float z) {
  const float az = std::fabs(z);
  const float t = 1.0f / (1.0f + 0.3275911f * az);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float r = 1.0f - poly * std::exp(-az * az);
  return z < 0.0f ? -r : r;
}

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < B; ++r) {
    const float* __restrict__ xr = x + r * D;
    float* __restrict__ yr = y + r * D;
#pragma omp simd
    for (int64_t j = 0; j < D; ++j) {
      const float v = xr[j];
      yr[j] = 0.5f * v * (1.0f + erf_as(v * 0.70710678f));
    }
  }
}
