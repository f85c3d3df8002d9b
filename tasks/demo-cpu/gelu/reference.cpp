// gelu, CPU reference: y = 0.5·x·(1 + erf(x/√2)) evaluated in double, rounded once to fp32.
#include <cmath>

extern "C" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {
  const int64_t n = B * D;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v * 0.70710678118654752440)));
  }
}
