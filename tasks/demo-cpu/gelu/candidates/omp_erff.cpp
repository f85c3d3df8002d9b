// gelu candidate: flat loop over B·D elements, OpenMP over cores, fp32 std::erf (libm erff, <= 2 ulp).
// The libm call keeps the loop scalar; the threads give the speed.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  const int64_t n = B * D;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
  }
}
